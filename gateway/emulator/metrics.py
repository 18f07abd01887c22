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

        def gauge(name: str, doc: str) -> Gauge:
            return Gauge(name, doc, base, registry=r).labels(**lv)

        def counter(name: str, doc: str) -> Counter:
            return Counter(name, doc, base, registry=r).labels(**lv)

        def histogram(name: str, doc: str, buckets: tuple[float, ...]) -> Histogram:
            return Histogram(name, doc, base, buckets=buckets, registry=r).labels(**lv)

        self.running = gauge("vllm:num_requests_running", "Number of requests in model execution batches.")
        self.waiting = gauge("vllm:num_requests_waiting", "Number of requests waiting to be processed.")
        self.kv_usage = gauge("vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.")
        self.preemptions = counter("vllm:num_preemptions", "Cumulative number of preemption from the engine.")
        self.prefix_queries = counter("vllm:prefix_cache_queries",
                                      "Prefix cache queries, in terms of number of queried tokens.")
        self.prefix_hits = counter("vllm:prefix_cache_hits", "Prefix cache hits, in terms of number of cached tokens.")
        self.prompt_tokens = counter("vllm:prompt_tokens", "Number of prefill tokens processed.")
        self.generation_tokens = counter("vllm:generation_tokens", "Number of generation tokens processed.")
        success = Counter("vllm:request_success", "Count of successfully processed requests.",
                          (*base, "finished_reason"), registry=r)
        self.success = {reason: success.labels(finished_reason=reason, **lv) for reason in FINISHED_REASONS}
        self.ttft = histogram("vllm:time_to_first_token_seconds",
                              "Histogram of time to first token in seconds.", TTFT_BUCKETS)
        self.itl = histogram("vllm:inter_token_latency_seconds",
                             "Histogram of inter-token latency in seconds.", ITL_BUCKETS)
        self.e2e = histogram("vllm:e2e_request_latency_seconds",
                             "Histogram of e2e request latency in seconds.", E2E_BUCKETS)
        self.queue_time = histogram("vllm:request_queue_time_seconds",
                                    "Histogram of time spent in WAITING phase for request.", E2E_BUCKETS)
        self.speculative = speculative
        if speculative:
            self.drafts = counter("vllm:spec_decode_num_drafts", "Number of spec decoding drafts.")
            self.draft_tokens = counter("vllm:spec_decode_num_draft_tokens", "Number of draft tokens.")
            self.accepted_tokens = counter("vllm:spec_decode_num_accepted_tokens", "Number of accepted tokens.")
            per_pos = Counter("vllm:spec_decode_num_accepted_tokens_per_pos", "Accepted tokens per draft position.",
                              (*base, "position"), registry=r)
            self.accepted_per_pos = [per_pos.labels(position=str(i), **lv) for i in range(gamma)]

    def cache_config(self, num_gpu_blocks: int, block_size: int) -> None:
        """vLLM's `vllm:cache_config_info` (a gauge at 1 whose labels are the cache's settings)."""
        labels = {"block_size": str(block_size), "cache_dtype": "auto", "enable_prefix_caching": "True",
                  "gpu_memory_utilization": "0.9", "num_cpu_blocks": "None", "num_gpu_blocks": str(num_gpu_blocks)}
        Gauge("vllm:cache_config_info", "Information of the LLMEngine CacheConfig", tuple(labels),
              registry=self.registry).labels(**labels).set(1)

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
