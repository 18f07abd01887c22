"""Metrics helpers of the request path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gateway.metrics import Metrics


@settings(deadline=None, max_examples=40)  # two registries per example: ~0.1 s each, no bound on a busy machine
@given(st.lists(st.floats(0.0, 5.0), max_size=50), st.integers(1, 3))
def test_batched_counts_and_observations_expose_what_one_call_per_value_does(values: list[float], flushes: int) -> None:
    """The request path's counters and histograms are gathered locally and flushed (before each /metrics render,
    every 0.5 s): the exposition is the same as calling the Prometheus child for each value."""
    batched, direct = Metrics(CollectorRegistry()), Metrics(CollectorRegistry())
    for i, value in enumerate(values):
        batched.observed(batched.inter_chunk, "baseline", "chat").observe(value)
        batched.observed(batched.overhead).observe(value / 1000)
        batched.counted(batched.output_tokens, "speculative", "json").inc(value)
        batched.counted(batched.decisions, "baseline", "chat", "pinned").inc()
        direct.child(direct.inter_chunk, "baseline", "chat").observe(value)
        direct.overhead.observe(value / 1000)
        direct.child(direct.output_tokens, "speculative", "json").inc(value)
        direct.child(direct.decisions, "baseline", "chat", "pinned").inc()
        if i % flushes == 0:
            batched.flush()
    batched.flush()
    names = {"specgate_inter_chunk_seconds", "specgate_gateway_overhead_seconds", "specgate_output_tokens",
             "specgate_decisions"}

    def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        families = text_string_to_metric_families(generate_latest(metrics.registry).decode())
        return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families
                if f.name in names for s in f.samples if not s.name.endswith("_created")}

    got, want = samples(batched), samples(direct)
    assert got.keys() == want.keys() and len(got) > 0
    for key, value in want.items():  # counts exactly; the sum up to the order of the float additions
        assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-9), key
