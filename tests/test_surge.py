"""A surge of arrivals on a shared GPU (`gateway.core.surge`): detected from the decision times, the mix priced at
the load the surge builds, and the router's regime moving on it; pure functions and the router that feeds them (no
I/O: its pool is never started)."""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from typing import Any

from gateway.backends import BackendPool
from gateway.core.costmodel import Role, StepModel
from gateway.core.learner import Learner
from gateway.core.mix_window import GroupRequest
from gateway.core.regime import MixSample, RegimeConfig, RegimeState, mix_costs, next_regime, ratio_of
from gateway.core.surge import SURGE_FACTOR, at_load, recent_rate, surge, surge_costs
from gateway.metrics import Metrics
from gateway.router import Router
from gateway.settings import Settings

MODELS: dict[Role, StepModel] = {"baseline": StepModel(0.005, 0.00004), "speculative": StepModel(0.0075, 0.00015)}
PREFILL: dict[Role, float] = {"baseline": 4e-5, "speculative": 4e-5}
CFG = RegimeConfig(switch_margin=0.05, min_dwell_s=10.0, externality_weight=1.0, decisive_margin=0.1,
                   free_drain_s=0.3, switch_cost_factor=1.0, speculation_max_load=16.0)


def _times(light: int, light_gap: float, fast: int, fast_gap: float, end: float) -> list[float]:
    """`light` decisions `light_gap` apart, then `fast` decisions `fast_gap` apart, the last at `end`."""
    fast_times = [end - fast_gap * i for i in range(fast - 1, -1, -1)]
    start = fast_times[0] if fast_times else end
    return [start - light_gap * i for i in range(light, 0, -1)] + fast_times


def test_the_recent_rate_counts_the_quiet_time_since_the_last_arrival() -> None:
    times = [0.0, 0.5, 1.0, 1.5]
    assert recent_rate(times, 1.5, 4) == 2.0
    assert recent_rate(times, 3.0, 4) == 1.0  # 1.5 s of quiet since the last one
    assert recent_rate(times, 1.5, 8) == 0.0  # fewer known than asked
    assert recent_rate(times, 1.5, 0) == 0.0


def test_a_surge_is_the_recent_arrivals_coming_faster_than_the_window_by_the_factor() -> None:
    steady = _times(48, 0.5, 16, 0.5, 100.0)  # 2 requests/s throughout
    assert surge(steady, 100.0, 16, 0.6) is None
    flood = _times(48, 0.5, 16, 1 / 13, 100.0)  # 2 requests/s, then 13 (fresh member 907's flood)
    s = surge(flood, 100.0, 16, 0.6)
    assert s is not None and abs(s.rate - 13.0) < 0.01
    assert abs(s.load - 13.0 * 0.6) < 0.01  # Little's law at a request's cost
    assert surge(flood, 100.0, 0, 0.6) is None  # off
    assert surge(flood[-16:], 100.0, 16, 0.6) is None  # no window beyond the recent arrivals to compare with
    slightly = _times(48, 0.5, 16, 0.5 / (SURGE_FACTOR * 0.9), 100.0)  # faster, but not by the factor
    assert surge(slightly, 100.0, 16, 0.6) is None


def test_at_load_raises_each_request_to_the_surges_load_and_keeps_those_above() -> None:
    samples = [MixSample(100, 50.0, 2.0, 1.0, 1.8), MixSample(100, 50.0, 2.0, 12.0, 1.8)]
    assert [s.load for s in at_load(samples, 8.0)] == [8.0, 12.0]
    assert at_load(samples, 8.0)[0]._replace(load=1.0) == samples[0]  # nothing else changes


def test_the_surges_costs_read_the_lower_of_the_window_and_its_recent_requests() -> None:
    """Structured requests copying well (speculation pays), then creative ones that copy nothing: at a flood's
    load the recent requests read the mix lower than the whole window, and the costs are theirs."""
    structured = [MixSample(200, 200.0, 3.0, 1.0, 3.0)] * 48
    creative = [MixSample(30, 150.0, 1.0, 1.0, 1.0)] * 16
    samples = structured + creative

    def costs(cut: Sequence[MixSample]) -> dict[Role, float]:
        return mix_costs(list(cut), MODELS, PREFILL, 1.0, evidence=True)

    totals, n = surge_costs(samples, 10.0, 16, costs)
    assert n == 16 and ratio_of(totals) == ratio_of(costs(at_load(creative, 10.0)))
    assert ratio_of(totals) < ratio_of(costs(at_load(samples, 10.0)))
    assert surge_costs(samples, 10.0, 0, costs)[1] == 64  # no recent cut: the window


def _speculative_pair(surge_requests: int) -> Router:
    """A pair whose speculative regime (held 100 s) has seen 48 light structured-and-creative requests at 2
    requests/s, then 16 creative ones at 13 requests/s, each at the load it met (1-2: the flood has only begun)."""
    s = Settings(baseline_urls=["http://127.0.0.1:9"], speculative_urls=["http://127.0.0.1:10"],
                 regime_surge_requests=surge_requests)
    router = Router(s, BackendPool(s, Metrics()), Learner(s.learner_config()))
    now = time.monotonic()
    router.regimes["pair-0"] = RegimeState("speculative", since_s=now - 100.0)
    router._early.clear()
    light = [GroupRequest(("structured", "greedy", 256, True), 200, True, 1.0)] * 24 \
        + [GroupRequest(("creative", "high", 256, True), 30, True, 1.0)] * 24
    flood = [GroupRequest(("creative", "high", 256, True), 30, True, 2.0)] * 16
    router.recent["pair-0"] = deque(light + flood, maxlen=64)
    router.arrivals["pair-0"] = deque(_times(48, 0.5, 16, 1 / 13, now), maxlen=64)
    return router


def test_a_surge_lowers_the_evidence_and_prices_a_leave_at_the_surges_rate() -> None:
    """Fresh member 907 of the family (2 requests/s, then 13-15 from 25 s, in a speculative regime): the mix
    priced at the loads its requests met (1.5-2.5 a second into the flood) and the window's rate (2.3 requests/s)
    asked for no leave worth its price until 34.5 s, the flood's worst 10 s past (1.11x the baseline alone). Priced
    at the load the surge builds, the evidence reads lower and the leave's gain counts the surge's arrivals."""
    calm, surged = _speculative_pair(0), _speculative_pair(16)
    for router in (calm, surged):
        router._update_regime("pair-0", 64, None)
    ev_calm, ev_surged = calm.regimes["pair-0"].evidence, surged.regimes["pair-0"].evidence
    assert ev_calm is not None and ev_surged is not None and ev_surged < ev_calm
    assert surged._surge_rate["pair-0"] > 12.0 and "pair-0" not in calm._surge_rate
    shown: dict[str, Any] = surged.state()["pair-0"]  # type: ignore[assignment]
    assert shown["surge_rate"] == surged._surge_rate["pair-0"]  # /admin/state says so
    assert calm.state()["pair-0"]["surge_rate"] is None  # type: ignore[index]
    # the same pending leave, priced by each: the surge's gain counts its own rate's requests over the horizon
    for router in (calm, surged):
        router.regimes["pair-0"] = RegimeState("speculative", since_s=time.monotonic() - 100.0, pending="baseline",
                                               pending_since_s=time.monotonic() - 1.0)
        router._update_regime("pair-0", 65, None)
    assert surged.prices["pair-0"].gain_s > calm.prices["pair-0"].gain_s


def test_a_baseline_regimes_surge_is_not_priced() -> None:
    """A surge only makes a baseline regime more right; priced at the surge's rate, a marginal entry into
    speculation looked paid (fresh member 1106: entered under load at a gain of 5.19 s against 5.14 s, 1.041x ->
    1.077x the better static). A baseline regime's mix and prices are the window's."""
    calm, surged = _speculative_pair(0), _speculative_pair(16)
    for router in (calm, surged):
        router.regimes["pair-0"] = RegimeState("baseline", since_s=time.monotonic() - 100.0)
        router._update_regime("pair-0", 64, None)
    assert "pair-0" not in surged._surge_rate
    assert surged.regimes["pair-0"].evidence == calm.regimes["pair-0"].evidence


def test_a_surge_asks_for_a_leave_before_the_dwell_is_over() -> None:
    """Member 815 of the family entered speculation on evidence at a flood's first second (load 0.8, a gain of 1.1 s
    at 0.1 s of cost: right at the rate it knew); the surge showed a second later, and the dwell held the regime
    through the flood (15 s, +12% a request against the baseline alone). A leave the surge's mix asks for does not
    wait for the dwell: it is still priced, and taken only when free or paid for. Outside the band only."""
    entered = RegimeState("speculative", since_s=100.0)
    assert next_regime(entered, 1.0, 102.0, CFG, evidence=0.9).pending is None  # inside the dwell, not decisive
    assert next_regime(entered, 1.0, 102.0, CFG, evidence=0.9, surging=True).pending == "baseline"
    assert next_regime(entered, 1.0, 102.0, CFG, evidence=0.98, surging=True).pending is None  # within the band
    trial = RegimeState("speculative", since_s=100.0, trial=True)  # not judged yet: its evidence is the prior
    assert next_regime(trial, 1.0, 102.0, CFG, evidence=0.9, surging=True).pending is None
