"""All `specgate_*` Prometheus metrics, owned by one object with an injectable registry."""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Callable
from typing import Any, TypeVar

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from gateway.core.classify import CLASSES
from gateway.core.costmodel import ROLES

LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0)
TTFT_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24)
GAP_BUCKETS = (0.0005, 0.001, 0.002, 0.004, 0.006, 0.008, 0.012, 0.016, 0.024, 0.032, 0.05, 0.1, 0.25, 1.0)
OVERHEAD_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.1)
RATIO_BUCKETS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0, 2.0)
FLUSH_INTERVAL_S = 0.5  # the longest the request path's counts wait before another worker's /metrics sees them
TOKEN_BUCKETS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        self._counts: dict[tuple[int, tuple[str, ...]], BatchedCount] = {}
        self._observations: dict[tuple[int, tuple[str, ...]], BatchedObservations] = {}
        r = self.registry
        self._request_metrics(r)
        self._backend_gauges(r)
        self._learned_gauges(r)
        self._failures_and_groups(r)
        self._traffic_shape(r)
        self._process_gauges(r)
        for role in ROLES:
            for cls in CLASSES:
                for family in (self.duration, self.ttft, self.inter_chunk, self.tpot, self.output_tokens,
                               self.predicted):
                    family.labels(role, cls)
            self.prediction_error.labels(role)
            self.learned_step.labels(role)
        for reason in ("switch", "resume_on_leaving", "not_worth", "resume_failed"):
            self.migrations.labels(reason)

    def _request_metrics(self, r: CollectorRegistry) -> None:
        """Per request: counts, decisions, latencies, tokens, predictions, the gateway's own overhead."""
        self.requests = Counter("specgate_requests", "Proxied requests by backend, class and status",
                                ["backend", "role", "class", "status"], registry=r)
        self.decisions = Counter("specgate_decisions", "Routing decisions by role, class and reason",
                                 ["role", "class", "reason"], registry=r)
        self.duration = Histogram("specgate_request_duration_seconds", "End-to-end latency",
                                  ["role", "class"], buckets=LATENCY_BUCKETS, registry=r)
        self.ttft = Histogram("specgate_time_to_first_token_seconds", "Time to first token",
                              ["role", "class"], buckets=TTFT_BUCKETS, registry=r)
        self.inter_chunk = Histogram("specgate_inter_chunk_seconds", "Gap between streamed chunks",
                                     ["role", "class"], buckets=GAP_BUCKETS, registry=r)
        self.tpot = Histogram("specgate_time_per_output_token_seconds", "Time per output token after the first",
                              ["role", "class"], buckets=GAP_BUCKETS, registry=r)
        self.output_tokens = Counter("specgate_output_tokens", "Completion tokens", ["role", "class"], registry=r)
        self.predicted = Histogram("specgate_predicted_duration_seconds", "Predicted end-to-end latency of the "
                                   "chosen backend", ["role", "class"], buckets=LATENCY_BUCKETS, registry=r)
        self.prediction_error = Histogram("specgate_prediction_error_ratio", "|predicted - observed| / observed",
                                          ["role"], buckets=RATIO_BUCKETS, registry=r)
        self.overhead = Histogram("specgate_gateway_overhead_seconds", "Request received to upstream request sent",
                                  buckets=OVERHEAD_BUCKETS, registry=r)

    def _backend_gauges(self, r: CollectorRegistry) -> None:
        """Per backend: in flight, health, and what its last scrape said."""
        self.inflight = Gauge("specgate_inflight_requests", "Requests in flight", ["backend", "role"], registry=r,
                              multiprocess_mode="livesum")
        self.up = Gauge("specgate_backend_up", "1 when healthy and not ejected", ["backend", "role"], registry=r,
                        multiprocess_mode="livemax")  # a dead worker's last word leaves with it
        self.running = Gauge("specgate_backend_running_requests", "Scraped vllm:num_requests_running",
                             ["backend", "role"], registry=r, multiprocess_mode="mostrecent")
        self.waiting = Gauge("specgate_backend_waiting_requests", "Scraped vllm:num_requests_waiting",
                             ["backend", "role"], registry=r, multiprocess_mode="mostrecent")
        self.kv_cache = Gauge("specgate_backend_kv_cache_usage_ratio", "Scraped vllm:kv_cache_usage_perc",
                              ["backend", "role"], registry=r, multiprocess_mode="mostrecent")
        self.acceptance_rate = Gauge("specgate_backend_acceptance_rate",
                                     "Accepted / drafted tokens over the last scrape interval",
                                     ["backend", "role"], registry=r, multiprocess_mode="mostrecent")
        self.acceptance_length = Gauge("specgate_backend_mean_acceptance_length",
                                       "Tokens per engine step over the last scrape interval",
                                       ["backend", "role"], registry=r, multiprocess_mode="mostrecent")

    def _learned_gauges(self, r: CollectorRegistry) -> None:
        """What the learner has learned, per class and temperature bucket (step time per role)."""
        self.learned_tps = Gauge("specgate_learned_tokens_per_step", "Learned tokens per speculative step",
                                 ["class", "temperature"], registry=r, multiprocess_mode="mostrecent")
        self.learned_acceptance = Gauge("specgate_learned_acceptance_rate", "Learned per-token acceptance",
                                        ["class", "temperature"], registry=r, multiprocess_mode="mostrecent")
        self.learned_output = Gauge("specgate_learned_output_tokens", "Learned mean output tokens",
                                    ["class", "temperature"], registry=r, multiprocess_mode="mostrecent")
        self.learned_step = Gauge("specgate_learned_step_seconds", "Learned step time at the current load",
                                  ["role"], registry=r, multiprocess_mode="mostrecent")

    def _failures_and_groups(self, r: CollectorRegistry) -> None:
        """Failovers, upstream errors, ejections; backends' GPU groups, routing load and regimes."""
        self.failovers = Counter("specgate_failovers", "Attempts that failed and were retried elsewhere",
                                 ["backend", "role"], registry=r)
        self.upstream_errors = Counter("specgate_upstream_errors", "Upstream failures by kind",
                                       ["backend", "role", "reason"], registry=r)
        self.ejections = Counter("specgate_backend_ejections", "Backends taken out of rotation",
                                 ["backend", "role"], registry=r)
        self.backend_info = Gauge("specgate_backend_info", "1 per backend, with its GPU group",
                                  ["backend", "role", "group"], registry=r, multiprocess_mode="max")
        self.routing_load = Gauge("specgate_backend_routing_load", "Requests running + waiting that routing uses "
                                  "(scraped from the server, plus this process's since the scrape)",
                                  ["backend", "role"], registry=r, multiprocess_mode="mostrecent")
        self.regime = Gauge("specgate_regime_speculative", "1 while a shared GPU group is carried by its "
                            "speculative server", ["group"], registry=r, multiprocess_mode="mostrecent")
        self.regime_switches = Counter("specgate_regime_switches", "Regime changes of a shared GPU group",
                                       ["group"], registry=r)
        self.regime_mix_ratio = Gauge("specgate_regime_mix_ratio", "A shared GPU group's recent requests: predicted "
                                      "cost with its baseline server carrying them over with its speculative server "
                                      "(above 1: speculation pays)", ["group"], registry=r,
                                      multiprocess_mode="mostrecent")
        self.migrations = Counter("specgate_migrations", "Live migration: running requests moved on a regime switch "
                                  "(reason switch) or off a speculative server whose drafts their own stream shows "
                                  "rejected (acceptance, SPECGATE_MIDSTREAM_MOVES), resumed where they were "
                                  "(resume_on_leaving) when the arriving server refused, and "
                                  "those left in place (not_worth) or lost to a failed resume (resume_failed)",
                                  ["reason"], registry=r)
        self.migration_latency = Histogram("specgate_migration_seconds", "Live migration: from closing a request's "
                                           "stream on the leaving server to the resumed request's first bytes",
                                           buckets=TTFT_BUCKETS, registry=r)

    def _traffic_shape(self, r: CollectorRegistry) -> None:
        """The traffic's shape, for `specgate plan --from`: per class and temperature bucket, and since when."""
        self.prompt_tokens = Histogram("specgate_prompt_tokens", "Prompt tokens per successful request (estimated)",
                                       ["class", "temperature"], registry=r, buckets=TOKEN_BUCKETS)
        self.completion_tokens = Histogram("specgate_completion_tokens", "Completion tokens per successful request",
                                           ["class", "temperature"], registry=r, buckets=TOKEN_BUCKETS)

    def _process_gauges(self, r: CollectorRegistry) -> None:
        """This gateway process: start time, draining, event loop tasks."""
        self.start_time = Gauge("specgate_start_time_seconds", "Unix time this gateway process started",
                                registry=r, multiprocess_mode="min")
        self.start_time.set(time.time())
        self.draining = Gauge("specgate_draining", "1 while shutting down", registry=r, multiprocess_mode="max")
        self.loop_tasks = Gauge("specgate_event_loop_tasks", "asyncio tasks alive (set on each scrape)", registry=r,
                                multiprocess_mode="livesum")

    def child(self, family: Counter | Gauge | Histogram, *labels: str) -> Any:
        """`family.labels(*labels)`, memoised: the request path asks for the same few children all the time."""
        key = (id(family), labels)
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = family.labels(*labels)
        return found

    def counted(self, family: Counter, *labels: str) -> BatchedCount:
        """A counter child whose increments wait in this process until `flush` (the request path's counters)."""
        return _batched(self._counts, family, labels, BatchedCount)

    def observed(self, family: Histogram, *labels: str) -> BatchedObservations:
        """A histogram child whose observations wait in this process until `flush` (the request path's)."""
        return _batched(self._observations, family, labels, BatchedObservations)

    def flush(self) -> None:
        """Add what the request path gathered to the Prometheus children: before every `/metrics` render, every
        `FLUSH_INTERVAL_S` (so another worker's render sees it in multiprocess mode) and at shutdown."""
        for count in self._counts.values():
            count.flush()
        for observations in self._observations.values():
            observations.flush()

    def observe_shape(self, task_class: str, bucket: str, prompt_tokens: int, completion_tokens: int) -> None:
        self.observed(self.prompt_tokens, task_class, bucket).observe(prompt_tokens)
        self.observed(self.completion_tokens, task_class, bucket).observe(completion_tokens)

    def register_backend(self, name: str, role: str, group: str) -> None:
        """Create a backend's children up front so every series exists from the first scrape."""
        self.backend_info.labels(name, role, group).set(1)
        self.routing_load.labels(name, role)
        for family in (self.inflight, self.up, self.running, self.waiting, self.kv_cache, self.failovers,
                       self.ejections):
            family.labels(name, role)
        if role == "speculative":
            self.acceptance_rate.labels(name, role)
            self.acceptance_length.labels(name, role)
        for reason in ("connect", "timeout", "status_5xx", "protocol", "midstream"):
            self.upstream_errors.labels(name, role, reason)


B = TypeVar("B", "BatchedCount", "BatchedObservations")


def _batched(store: dict[tuple[int, tuple[str, ...]], B], family: Counter | Histogram, labels: tuple[str, ...],
             make: Callable[[Any], B]) -> B:
    """The batching wrapper of `family`'s child with `labels` (the family itself when it has none), made once."""
    key = (id(family), labels)
    found = store.get(key)
    if found is None:
        found = store[key] = make(family.labels(*labels) if labels else family)
    return found


class BatchedObservations:
    """Observations of one histogram child gathered locally and added at once by `flush` (`observe` took ~1.5 µs
    a value, a lock per write and a Python loop over the buckets; this takes ~0.15 µs). Writes through the child's
    bucket and sum values, as `Histogram.observe` does, so multiprocess mode still adds up; tests/test_metrics.py
    checks the exposition equals per-value `observe` calls."""

    __slots__ = ("_bounds", "_child", "_counts", "_sum")

    def __init__(self, child: Any) -> None:
        self._child = child
        self._bounds = child._upper_bounds
        self._counts = [0] * len(self._bounds)
        self._sum = 0.0

    def observe(self, amount: float) -> None:
        self._counts[bisect_left(self._bounds, amount)] += 1  # the first bucket with amount <= its bound
        self._sum += amount

    def flush(self) -> None:
        counts, self._counts = self._counts, [0] * len(self._bounds)
        if not any(counts):
            return
        for bucket, n in zip(self._child._buckets, counts, strict=True):
            if n:
                bucket.inc(n)
        self._child._sum.inc(self._sum)
        self._sum = 0.0


class BatchedCount:
    """Increments of one counter child gathered locally and added at once by `flush`."""

    __slots__ = ("_child", "_pending")

    def __init__(self, child: Any) -> None:
        self._child = child
        self._pending = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self._pending += amount

    def flush(self) -> None:
        if self._pending:
            pending, self._pending = self._pending, 0.0
            self._child.inc(pending)
