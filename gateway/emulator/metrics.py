"""vLLM 0.26's Prometheus series (names, labels, buckets as in its real `/metrics`), one registry per server.

Latencies are in simulated seconds (real seconds / time_scale), like a vLLM on the GPU being emulated.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

FINISHED_REASONS = ("stop", "length", "abort", "error", "repetition")
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0, 160.0, 640.0, 2560.0)
ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0,
               80.0)
E2E_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0,
               960.0, 1920.0, 7680.0)


class EngineMetrics:
    def __init__(self, model_name: str, speculative: bool, gamma: int) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        base = ("engine", "model_name")
        lv = {"engine": "0", "model_name": model_name}
        self.running = Gauge("vllm:num_requests_running", "Number of requests in model execution batches.",
                             base, registry=r).labels(**lv)
        self.waiting = Gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.",
                             base, registry=r).labels(**lv)
        self.kv_usage = Gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
                              base, registry=r).labels(**lv)
        self.preemptions = Counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.",
                                   base, registry=r).labels(**lv)
        self.prefix_queries = Counter("vllm:prefix_cache_queries",
                                      "Prefix cache queries, in terms of number of queried tokens.",
                                      base, registry=r).labels(**lv)
        self.prefix_hits = Counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.",
                                   base, registry=r).labels(**lv)
        self.prompt_tokens = Counter("vllm:prompt_tokens", "Number of prefill tokens processed.",
                                     base, registry=r).labels(**lv)
        self.generation_tokens = Counter("vllm:generation_tokens", "Number of generation tokens processed.",
                                         base, registry=r).labels(**lv)
        success = Counter("vllm:request_success", "Count of successfully processed requests.",
                          (*base, "finished_reason"), registry=r)
        self.success = {reason: success.labels(finished_reason=reason, **lv) for reason in FINISHED_REASONS}
        self.ttft = Histogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.",
                              base, buckets=TTFT_BUCKETS, registry=r).labels(**lv)
        self.itl = Histogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.",
                             base, buckets=ITL_BUCKETS, registry=r).labels(**lv)
        self.e2e = Histogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.",
                             base, buckets=E2E_BUCKETS, registry=r).labels(**lv)
        self.queue_time = Histogram("vllm:request_queue_time_seconds",
                                    "Histogram of time spent in WAITING phase for request.",
                                    base, buckets=E2E_BUCKETS, registry=r).labels(**lv)
        self.speculative = speculative
        if speculative:
            self.drafts = Counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.",
                                  base, registry=r).labels(**lv)
            self.draft_tokens = Counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.",
                                        base, registry=r).labels(**lv)
            self.accepted_tokens = Counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.",
                                           base, registry=r).labels(**lv)
            per_pos = Counter("vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position.",
                              (*base, "position"), registry=r)
            self.accepted_per_pos = [per_pos.labels(position=str(i), **lv) for i in range(gamma)]

    def record_spec(self, drafted: int, accepted: int) -> None:
        if not self.speculative or drafted <= 0:
            return
        self.drafts.inc()
        self.draft_tokens.inc(drafted)
        if accepted:
            self.accepted_tokens.inc(accepted)
            for i in range(min(accepted, len(self.accepted_per_pos))):
                self.accepted_per_pos[i].inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)
