"""The regime's summed mix cost agrees with the full prediction of each request."""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from gateway.core.costmodel import RequestShape, Role, StepModel, predict
from gateway.core.regime import MixSample, mix_costs

positive = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


sample = st.builds(MixSample, st.integers(0, 100_000), st.floats(0.0, 8192.0), st.floats(0.0, 8.0),
                   st.floats(0.0, 512.0))


@given(samples=st.lists(sample, max_size=8), base=st.floats(1e-4, 0.2), slope=st.floats(0.0, 0.01),
       spec_base=st.floats(1e-4, 0.2), spec_slope=st.floats(0.0, 0.01), prefill=st.floats(0.0, 1e-3),
       weight=positive)
def test_mix_costs_is_the_sum_of_predictions_without_co_runners(
        samples: list[MixSample], base: float, slope: float, spec_base: float, spec_slope: float, prefill: float,
        weight: float) -> None:
    models: dict[Role, StepModel] = {"baseline": StepModel(base, slope),
                                     "speculative": StepModel(spec_base, spec_slope)}
    totals = mix_costs(samples, models, {"baseline": prefill, "speculative": 2 * prefill}, weight)
    cases: tuple[tuple[Role, Callable[[MixSample], float], float], ...] = (
        ("baseline", lambda s: 1.0, prefill), ("speculative", lambda s: s.tokens_per_step, 2 * prefill))
    for role, tps_of, role_prefill in cases:
        full = sum(predict(RequestShape(s.prompt_tokens, s.output_tokens, tps_of(s)), s.load, models[role], 0.0,
                           role_prefill).cost(weight) for s in samples)
        assert math.isclose(totals[role], full, rel_tol=1e-9, abs_tol=1e-12)
