"""The cost model's shortcut for the regime's mix agrees with the full prediction."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from gateway.costmodel import RequestShape, StepModel, cost_alone, predict

positive = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


@given(prompt=st.integers(0, 100_000), output=st.floats(0.0, 8192.0), tps=st.floats(0.0, 8.0),
       load=st.floats(0.0, 512.0), base=st.floats(1e-4, 0.2), slope=st.floats(0.0, 0.01),
       prefill=st.floats(0.0, 1e-3), weight=positive)
def test_cost_alone_is_predict_without_co_runners(prompt: int, output: float, tps: float, load: float, base: float,
                                                  slope: float, prefill: float, weight: float) -> None:
    model = StepModel(base, slope)
    full = predict(RequestShape(prompt, output, tps), load, model, 0.0, prefill).cost(weight)
    shortcut = cost_alone(prompt, output, tps, load, model, prefill, weight)
    assert math.isclose(shortcut, full, rel_tol=1e-9, abs_tol=1e-12)
