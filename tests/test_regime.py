"""Pure regime choice for a shared GPU: hysteresis, dwell, and the mix deciding (not the first requests)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from gateway.costmodel import Role, StepModel
from gateway.regime import MixSample, RegimeConfig, RegimeState, mix_ratio, next_regime

MODELS: dict[Role, StepModel] = {"baseline": StepModel(0.005, 0.00004), "speculative": StepModel(0.0075, 0.00015)}
PREFILL: dict[Role, float] = {"baseline": 4e-5, "speculative": 4e-5}
CFG = RegimeConfig(switch_margin=0.05, min_dwell=8, externality_weight=1.0)


def test_mix_ratio_says_speculation_pays_for_predictable_light_traffic_only() -> None:
    light = [MixSample(200, 128, 3.0, 1) for _ in range(32)]
    heavy = [MixSample(200, 128, 1.3, 48) for _ in range(32)]
    creative = [MixSample(200, 128, 1.0, 1) for _ in range(32)]
    assert (mix_ratio(light, MODELS, PREFILL, 1.0) or 0) > 1.05
    assert (mix_ratio(heavy, MODELS, PREFILL, 1.0) or 2) < 1 / 1.05
    assert (mix_ratio(creative, MODELS, PREFILL, 1.0) or 2) < 1.0
    assert mix_ratio([], MODELS, PREFILL, 1.0) is None


def test_switches_only_outside_the_band_and_after_the_dwell() -> None:
    s = RegimeState()
    s = next_regime(s, 1.04, 8, CFG)
    assert s.role == "baseline"  # inside the band
    s = next_regime(s, 1.2, 16, CFG)
    assert (s.role, s.since, s.switches) == ("speculative", 16, 1)
    s = next_regime(s, 0.5, 20, CFG)
    assert s.role == "speculative"  # dwell not over
    s = next_regime(s, 0.97, 24, CFG)
    assert s.role == "speculative"  # inside the band
    s = next_regime(s, 0.9, 32, CFG)
    assert s.role == "baseline" and s.switches == 2


@given(st.lists(st.floats(0.5, 2.0), min_size=1, max_size=60))
def test_a_ratio_inside_the_band_never_flips(ratios: list[float]) -> None:
    s = RegimeState()
    for i, r in enumerate(ratios):
        before = s.role
        s = next_regime(s, r, 8 * (i + 1), CFG)
        if 1 / 1.05 <= r <= 1.05:
            assert s.role == before


def test_a_replica_joins_the_regime_the_servers_show_unless_its_own_evidence_is_decisive() -> None:
    from gateway.regime import follow_fleet

    s = RegimeState()  # baseline
    assert follow_fleet(s, 1.03, "speculative", 40, 0.10).role == "speculative"  # not decisive: join the fleet
    assert follow_fleet(s, 0.80, "speculative", 40, 0.10).role == "baseline"  # decisive: keep its own
    assert follow_fleet(s, 1.03, None, 40, 0.10) == s  # no fleet signal (one gateway, or no load)
    assert follow_fleet(s, 1.03, "baseline", 40, 0.10) == s
