"""Metrics helpers of the request path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gateway.metrics import BatchedObservations, Metrics


@settings(deadline=None, max_examples=40)  # two registries per example: ~0.1 s each, no bound on a busy machine
@given(st.lists(st.floats(0.0, 5.0), max_size=50), st.integers(1, 3))
def test_batched_observations_expose_what_one_observe_per_value_does(values: list[float], flushes: int) -> None:
    """Stream gaps are gathered per stream and flushed at its end: the exposition is the same as observing each."""
    batched, direct = Metrics(CollectorRegistry()), Metrics(CollectorRegistry())
    gaps = BatchedObservations(batched.child(batched.inter_chunk, "baseline", "chat"))
    for i, value in enumerate(values):
        gaps.observe(value)
        direct.child(direct.inter_chunk, "baseline", "chat").observe(value)
        if i % flushes == 0:
            gaps.flush()
    gaps.flush()

    def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        families = text_string_to_metric_families(generate_latest(metrics.registry).decode())
        return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families
                if f.name == "specgate_inter_chunk_seconds" for s in f.samples}

    got, want = samples(batched), samples(direct)
    assert got.keys() == want.keys() and len(got) > 0
    for key, value in want.items():  # counts exactly; the sum up to the order of the float additions
        assert got[key] == pytest.approx(value, rel=1e-9, abs=1e-9), key
