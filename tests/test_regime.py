"""Regime choice for a shared GPU: hysteresis, dwell, and the mix deciding (not the first requests); pure functions,
and the router that feeds them (no I/O: its pool is never started)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from gateway.backends import BackendPool
from gateway.core.costmodel import OTHER_ROLE, Role, StepModel
from gateway.core.learner import Learner
from gateway.core.protocol import RequestView, request_view
from gateway.core.regime import (
    REMAINING_FLOOR,
    MixSample,
    RegimeConfig,
    RegimeState,
    Running,
    SwitchPrice,
    capped_ratio,
    leave_large_batch,
    mix_costs,
    mix_ratio,
    next_regime,
    remaining,
    settle,
    switch_gain,
    switch_horizon,
    switch_price,
    worth_probing,
)
from gateway.metrics import Metrics
from gateway.router import Router
from gateway.settings import Settings

MODELS: dict[Role, StepModel] = {"baseline": StepModel(0.005, 0.00004), "speculative": StepModel(0.0075, 0.00015)}
PREFILL: dict[Role, float] = {"baseline": 4e-5, "speculative": 4e-5}
CFG = RegimeConfig(switch_margin=0.05, min_dwell_s=10.0, externality_weight=1.0, decisive_margin=0.5,
                   free_drain_s=0.3, switch_cost_factor=1.0, speculation_max_load=24.0)
FREE = SwitchPrice(0.0, 0.0, 0.0)  # the leaving server is idle
BUSY = SwitchPrice(3.0, 40.0, 5.0)  # a burst draining: 3 s of co-running for 40 s of latency, 5 s to gain


def step(s: RegimeState, ratio: float, now: float, price: SwitchPrice = FREE) -> RegimeState:
    """One recomputation at time `now` followed by a settle at the given price."""
    return settle(next_regime(s, ratio, now, CFG), now, price, CFG)


def test_mix_ratio_says_speculation_pays_for_predictable_light_traffic_only() -> None:
    light = [MixSample(200, 128, 3.0, 1) for _ in range(32)]
    heavy = [MixSample(200, 128, 1.3, 48) for _ in range(32)]
    creative = [MixSample(200, 128, 1.0, 1) for _ in range(32)]
    assert (mix_ratio(light, MODELS, PREFILL, 1.0) or 0) > 1.05
    assert (mix_ratio(heavy, MODELS, PREFILL, 1.0) or 2) < 1 / 1.05
    assert (mix_ratio(creative, MODELS, PREFILL, 1.0) or 2) < 1.0
    assert mix_ratio([], MODELS, PREFILL, 1.0) is None


def test_a_probe_is_worth_it_only_for_a_class_whose_acceptance_could_move_the_mix() -> None:
    """A class that is most of the mix can move it; one request in 32 cannot, however good its acceptance."""
    creative = [MixSample(200, 128, 1.05, 1) for _ in range(31)]
    keys = ["creative"] * 31
    rare = [*creative, MixSample(200, 128, 1.2, 1)]
    totals = mix_costs(rare, MODELS, PREFILL, 1.0)
    assert worth_probing(rare, [*keys, "sql"], {"sql": 4.0, "creative": 1.1}, MODELS, totals, 1.0, 1.05) == set()
    assert worth_probing(rare, [*keys, "sql"], {"sql": 4.0, "creative": 4.0}, MODELS, totals, 1.0,
                         1.05) == {"creative"}
    half = [MixSample(200, 128, 1.2, 1) for _ in range(32)]
    half_totals = mix_costs(half, MODELS, PREFILL, 1.0)
    assert worth_probing(half, ["sql"] * 16 + ["chat"] * 16, {"sql": 4.0}, MODELS, half_totals, 1.0, 1.05) == {"sql"}
    assert worth_probing([], [], {}, MODELS, {"baseline": 0.0, "speculative": 0.0}, 1.0, 1.05) == set()


def test_switches_only_outside_the_band_and_after_the_dwell_in_seconds() -> None:
    s = RegimeState()
    s = step(s, 1.04, 1.0)
    assert s.role == "baseline"  # inside the band
    s = step(s, 1.2, 2.0)
    assert (s.role, s.since_s, s.switches) == ("speculative", 2.0, 1)
    s = step(s, 0.9, 11.9)
    assert s.role == "speculative" and s.pending is None  # 9.9 s held: dwell not over, and 0.9 is not decisive
    s = step(s, 0.97, 13.0)
    assert s.role == "speculative"  # inside the band
    s = step(s, 0.9, 12.0 + 0.1)
    assert s.role == "baseline" and s.switches == 2


def test_the_dwell_counts_seconds_not_decisions() -> None:
    """Seen on an unseen bursty trace: a dwell of 16 decisions was 1.3 s at 12 requests/s, and two switches fell
    inside one burst. Many decisions in little time do not end the dwell."""
    s = step(RegimeState(), 1.2, 0.0)
    for i in range(200):  # 200 decisions within 2 s
        s = step(s, 0.9, 0.01 * i)
    assert s.role == "speculative" and s.switches == 1


def test_a_decisive_ratio_does_not_wait_for_the_dwell() -> None:
    s = step(RegimeState(), 1.2, 1.0)
    assert s.role == "speculative"
    s = step(s, 0.6, 1.5)  # 1/0.6 = 1.67 > 1.5: decisive
    assert (s.role, s.switches) == ("baseline", 2)


@pytest.mark.parametrize(("price", "switches"), [
    (SwitchPrice(0.0, 0.0, 0.0), True),  # the leaving server is idle
    (SwitchPrice(0.3, 0.2, 0.3), True),  # it drains within free_drain_s: nearly free, its co-running within its gain
    (SwitchPrice(0.26, 1.99, 0.42), False),  # a short drain the arriving load makes dear (bursty, shadow on)
    (SwitchPrice(0.31, 0.5, 0.4), False),  # not free, and the gain does not cover the co-running
    (SwitchPrice(2.0, 5.0, 5.1), True),  # not free, but it pays over the horizon
    (SwitchPrice(2.0, 5.0, 5.0), False),  # a gain equal to its cost is no reason to move
    (SwitchPrice(3.0, 40.0, 5.0), False),  # a burst draining (the switch inside a burst)
])
def test_a_pending_switch_is_taken_only_when_free_or_paid_for(price: SwitchPrice, switches: bool) -> None:
    pending = next_regime(RegimeState(), 1.2, 20.0, CFG)
    assert pending.pending == "speculative"
    after = settle(pending, 20.5, price, CFG)
    assert (after.role == "speculative") == switches
    assert after.pending == (None if switches else "speculative")
    if switches:
        assert (after.since_s, after.switches) == (20.5, 1)


def test_a_switch_that_is_not_free_must_gain_its_cost_times_the_factor() -> None:
    """The linear co-running model missed the queue a burst builds: a switch priced at ~7 s cost ~23 s."""
    from dataclasses import replace

    cautious = replace(CFG, switch_cost_factor=4.0)
    pending = next_regime(RegimeState(), 1.2, 20.0, cautious)
    assert settle(pending, 21.0, SwitchPrice(1.0, 7.0, 11.0), cautious).role == "baseline"
    assert settle(pending, 21.0, SwitchPrice(1.0, 7.0, 28.1), cautious).role == "speculative"
    assert settle(pending, 21.0, SwitchPrice(0.2, 0.1, 0.2), cautious).role == "speculative"  # free


def test_speculation_is_entered_only_where_its_gain_covers_its_co_running_the_enter_factor_times() -> None:
    """The bursty built-in with the idle server's step measured: speculation entered on a 0.29-s drain (free) at a
    gain of 2.51 s against 2.27 s, just before a burst that ran slower there (1.026x the better static); every other
    entry into speculation of the reference runs had 7.5-10.7 times its cost. Leaving it asks only the cost once."""
    from dataclasses import replace

    cfg = replace(CFG, enter_cost_factor=2.0)
    entering = next_regime(RegimeState(), 1.2, 20.0, cfg)
    assert entering.pending == "speculative"
    assert settle(entering, 21.0, SwitchPrice(0.29, 2.27, 2.51), cfg).role == "baseline"  # neither free nor paid
    assert settle(entering, 21.0, SwitchPrice(0.19, 1.11, 9.26), cfg).role == "speculative"  # the code burst's
    assert settle(entering, 21.0, SwitchPrice(0.0, 0.0, 0.5), cfg).role == "speculative"  # idle: free
    leaving = next_regime(RegimeState("speculative"), 0.8, 20.0, cfg)
    assert leaving.pending == "baseline"
    assert settle(leaving, 21.0, SwitchPrice(0.29, 2.27, 2.51), cfg).role == "baseline"  # once is enough to leave


def test_the_gains_horizon_is_the_dwell_then_how_long_the_switch_has_waited() -> None:
    """Regression: the router priced a switch that had just become pending with the state before it (pending since
    0.0 on the monotonic clock), so the horizon was the machine's uptime and every switch looked paid for (a gain of
    229 s against a cost of 4.9 s, inside a burst)."""
    now = 5000.0
    fresh = next_regime(RegimeState("speculative"), 0.8, now, CFG)
    assert fresh.pending == "baseline" and switch_horizon(fresh, now, CFG) == CFG.min_dwell_s
    assert switch_horizon(fresh, now + 3.0, CFG) == CFG.min_dwell_s
    assert switch_horizon(fresh, now + 25.0, CFG) == 25.0
    assert switch_horizon(RegimeState(), now, CFG) == CFG.min_dwell_s


def test_a_pending_switch_waits_and_is_dropped_when_the_mix_returns() -> None:
    s = step(RegimeState(), 1.2, 20.0, BUSY)
    assert (s.role, s.pending, s.pending_since_s) == ("baseline", "speculative", 20.0)
    s = step(s, 1.3, 21.0, BUSY)
    assert s.pending_since_s == 20.0  # still the same pending switch, however long it waits
    s = step(s, 1.01, 22.0, BUSY)
    assert s.pending is None and s.role == "baseline"
    s = step(s, 1.2, 23.0, BUSY)
    s = settle(s, 23.5, SwitchPrice(0.2, 0.0, 0.0), CFG)
    assert (s.role, s.since_s, s.pending) == ("speculative", 23.5, None)


@pytest.mark.parametrize(("running", "count", "now", "left"), [
    ([], 0, 5.0, []),
    ([Running(0.0, 2.0), Running(1.0, 2.0)], 2, 1.5, [1.5, 0.5]),  # each: sent + predicted e2e - now
    ([Running(0.0, 2.0), Running(1.0, 2.0), Running(1.2, 0.5)], 1, 1.5, [1.5]),  # the one predicted to end last
    ([Running(0.0, 2.0)], 1, 9.0, [0.2]),  # past its prediction: a tenth of it left
    ([Running(0.0, 2.0)], 3, 1.0, [1.0, 2.0, 2.0]),  # other gateways' requests: the mean prediction
    ([], 2, 1.0, [0.0, 0.0]),  # nothing known: nothing to price
    # fresh member 907: a request predicted at 19 s had ended after 1.2; taken as the one to end last, it priced a
    # 12-18 s drain, then (past its prediction) 1.9 s, and held a wrong speculative regime through a flood (1.107x)
    ([Running(0.0, 19.0, done=True), Running(1.0, 2.0)], 1, 1.5, [1.5]),
])
def test_the_leaving_servers_remaining_work(running: list[Running], count: int, now: float,
                                            left: list[float]) -> None:
    assert remaining(running, count, now) == pytest.approx(left)


def test_the_price_of_a_switch_grows_with_what_is_left_and_with_the_arriving_load() -> None:
    kappa: dict[Role, float] = {"baseline": 0.2, "speculative": 1.0}
    assert switch_price([], MODELS, kappa, "baseline", 10.0, 1.0) == SwitchPrice(0.0, 0.0, 1.0, 10.0)
    one = switch_price([0.5], MODELS, kappa, "baseline", 2.0, 0.0)
    many = switch_price([2.0] * 12, MODELS, kappa, "baseline", 2.0, 0.0)
    busier = switch_price([2.0] * 12, MODELS, kappa, "baseline", 12.0, 0.0)
    assert (one.drain_s, many.drain_s) == (0.5, 2.0)
    assert 0 < one.cost_s < many.cost_s < busier.cost_s
    # 12 speculative requests with 2 s left each stretch by κ_spec · own_base(2) / own_spec(12); 2 baseline
    # requests wait κ_base · own_spec(12) per own_base(2) step for the 2 s drain
    expected = 24.0 * 1.0 * MODELS["baseline"].own_s(2) / MODELS["speculative"].own_s(12) \
        + 2 * 2.0 * 0.2 * MODELS["speculative"].own_s(12) / MODELS["baseline"].own_s(2)
    assert many.cost_s == pytest.approx(expected)
    unknown = switch_price([0.5], MODELS, kappa, "baseline", math.inf, 3.0)  # the rate of what may be a flood
    assert unknown == SwitchPrice(0.5, math.inf, 3.0, math.inf)
    assert settle(next_regime(RegimeState("speculative"), 0.5, 1.0, CFG), 1.0, unknown, CFG).switches == 0


def test_the_gain_counts_only_the_saving_beyond_the_band_over_the_horizons_requests() -> None:
    totals: dict[Role, float] = {"baseline": 64.0, "speculative": 80.0}  # 64 requests: 1.0 s vs 1.25 s each
    assert switch_gain(totals, 64, "baseline", 10.0, 0.05) == pytest.approx(10 * (1.25 - 1.05))
    assert switch_gain(totals, 64, "baseline", 100.0, 0.05) == pytest.approx(100 * (1.25 - 1.05))
    assert switch_gain(totals, 64, "baseline", math.inf, 0.05) == pytest.approx(64 * (1.25 - 1.05))  # rate unknown
    assert switch_gain(totals, 64, "speculative", 10.0, 0.05) == 0.0  # the wrong way
    near: dict[Role, float] = {"baseline": 64.0, "speculative": 66.0}  # within the band: no gain to pay for anything
    assert switch_gain(near, 64, "baseline", 10.0, 0.05) == 0.0
    assert switch_gain(totals, 0, "baseline", 10.0, 0.05) == 0.0


@given(st.lists(st.tuples(st.floats(0.5, 2.0), st.floats(0.001, 3.0), st.floats(0, 2.0), st.floats(0, 20),
                          st.floats(0, 20)), min_size=1, max_size=80))
def test_every_switch_is_free_or_paid_for_and_band_switches_are_a_dwell_apart(
        steps: list[tuple[float, float, float, float, float]]) -> None:
    """Whatever the mix and the prices: a ratio inside the band never flips; every switch happens at a price that
    is free (drain within free_drain_s) or paid (gain > cost); and switches that were not decisive come at least
    `min_dwell_s` apart, so over a span S there are at most 1 + S / min_dwell_s of them."""
    s, now, last = RegimeState(), 0.0, -1e9
    band_switches = 0
    for ratio, dt, drain, cost, gain in steps:
        now += dt
        price = SwitchPrice(drain, cost, gain)
        before = s
        s = step(s, ratio, now, price)
        if 1 / 1.05 <= ratio <= 1.05:
            assert s.role == before.role and s.pending is None
        if s.role != before.role:
            assert drain <= CFG.free_drain_s or gain > cost
            decisive = not 1 / 1.5 <= ratio <= 1.5
            if not decisive:
                assert now - last >= CFG.min_dwell_s
                band_switches += 1
            last = now
    assert band_switches <= 1 + now / CFG.min_dwell_s


def test_a_replica_joins_the_regime_the_servers_show_unless_its_own_evidence_is_decisive() -> None:
    from gateway.core.regime import follow_fleet

    s = RegimeState()  # baseline
    assert follow_fleet(s, 1.03, "speculative", 40, 0.10).role == "speculative"  # not decisive: join the fleet
    assert follow_fleet(s, 0.80, "speculative", 40, 0.10).role == "baseline"  # decisive: keep its own
    assert follow_fleet(s, 1.03, None, 40, 0.10) == s  # no fleet signal (one gateway, or no load)
    assert follow_fleet(s, 1.03, "baseline", 40, 0.10) == s


def _router_on_a_pair() -> tuple[Router, BackendPool]:
    s = Settings(baseline_urls=["http://127.0.0.1:9"], speculative_urls=["http://127.0.0.1:10"])
    pool = BackendPool(s, Metrics())
    return Router(s, pool, Learner(s.learner_config())), pool


def _role(router: Router) -> str:
    return router.regimes["pair-0"].role


def _json_request() -> RequestView:
    return request_view("/v1/chat/completions", {"model": "m", "temperature": 0, "max_tokens": 128,
                                                 "messages": [{"role": "user", "content": "Return JSON: {}"}]})


def test_optimism_about_unmeasured_classes_fades_with_the_load_it_would_commit() -> None:
    """Seen on mixed-high (35 requests/s): nothing measured yet, the optimistic mix (1.18x) put the GPU in the
    speculative regime and 150 requests followed before the first answer came back (3.8 s against 0.98 s
    all-baseline). On a quiet GPU the same optimism still tries speculation first."""
    quiet, _ = _router_on_a_pair()
    quiet.route(_json_request(), "r0")
    assert _role(quiet) == "baseline"  # one request: the arrival rate is unknown
    quiet.arrivals["pair-0"][0] -= 60.0  # the first came a minute ago: about one request a minute
    quiet.route(_json_request(), "r1")
    assert _role(quiet) == "speculative"
    busy, pool = _router_on_a_pair()
    for b in pool.backends:
        b.inflight = 60 if b.role == "baseline" else 0
    busy.route(_json_request(), "r0")
    assert busy.regimes["pair-0"].role == "baseline"


def test_requests_arriving_fast_fade_the_optimism_too() -> None:
    """The GPU is still empty at a high arrival rate's first decisions; what a wrong choice commits is the
    requests arriving during one request, and before a second request nobody knows that rate."""
    router, _ = _router_on_a_pair()
    for i in range(4):  # microseconds apart: thousands of requests per second
        router.route(_json_request(), f"r{i}")
        assert router.regimes["pair-0"].role == "baseline"


def test_a_large_batch_never_asks_for_speculation() -> None:
    """Seen on mixed-high (30-40 requests running): the step fits drifted and the mix read 1.5x for speculation;
    the regime went speculative and cost 1.9x all-baseline. Above the load cap the ratio cannot ask for it."""
    assert capped_ratio(1.5, 10.0, CFG) == 1.5  # CFG caps at 24
    high = capped_ratio(1.5, 40.0, CFG)
    assert high is not None and high < 1.0 / (1.0 + CFG.switch_margin)
    assert next_regime(RegimeState(), high, 100.0, CFG).pending is None  # baseline stays
    leaving = next_regime(RegimeState("speculative", 0.0), high, 100.0, CFG)
    assert leaving.pending == "baseline"  # and a speculative regime is asked to leave
    assert capped_ratio(None, 40.0, CFG) is None

    assert leave_large_batch(RegimeState("speculative", 0.0), 40.0, 7.0, CFG).role == "baseline"  # at once
    assert leave_large_batch(RegimeState("speculative", 0.0), 10.0, 7.0, CFG).role == "speculative"


def test_the_regime_its_mix_ratio_and_its_switches_are_exported() -> None:
    """The dashboard's regime row: which server carries the GPU, the mix ratio the regime acted on, and its
    switches, at 0 from the start (a group that never switched shows 0, not an empty panel)."""
    registry = CollectorRegistry()
    s = Settings(baseline_urls=["http://127.0.0.1:9"], speculative_urls=["http://127.0.0.1:10"])
    metrics = Metrics(registry)
    router = Router(s, BackendPool(s, metrics), Learner(s.learner_config()), metrics)

    def sample(name: str) -> float | None:
        return registry.get_sample_value(name, {"group": "pair-0"})

    assert sample("specgate_regime_switches_total") == 0.0
    router.route(_json_request(), "r0")
    router.arrivals["pair-0"][0] -= 60.0  # about one request a minute: the optimistic mix asks for speculation
    router.route(_json_request(), "r1")
    state = router.regimes["pair-0"]
    assert state.role == "speculative" and state.ratio is not None
    assert sample("specgate_regime_speculative") == 1.0
    assert sample("specgate_regime_switches_total") == 1.0
    assert sample("specgate_regime_mix_ratio") == pytest.approx(state.ratio)
    assert state.ratio > 1.0 + s.regime_switch_margin


def _pending_switch(leaving: Role, running: int, each: Running) -> tuple[Router, float]:
    """A pair whose regime (`leaving`, held 100 s) has a switch pending for 1 s, `running` requests like `each` on the
    leaving server; and the time it was set up."""
    import time
    from collections import deque

    router, pool = _router_on_a_pair()
    now = time.monotonic()
    router.regimes["pair-0"] = RegimeState(leaving, since_s=now - 100.0, pending=OTHER_ROLE[leaving],
                                           pending_since_s=now - 1.0)
    for b in pool.backends:
        b.inflight = running if b.role == leaving else 0
    router.running["pair-0"][leaving] = deque([each] * running)
    return router, now


def test_the_router_takes_a_pending_switch_once_the_leaving_servers_requests_are_about_to_end() -> None:
    """The router's wiring: the leaving server's load (three requests running) with the predictions of the
    requests sent there, priced at a decision; a drain within free_drain_s whose co-running the gain covers
    switches, a long one waits (its co-running, 8 s, exceeds the gain, 3 s)."""
    import time
    from collections import deque

    for left_s, switched in ((0.1, True), (2.0, False)):
        set_up = time.monotonic()
        router, now = _pending_switch("speculative", 3, Running(set_up - 1.0, 1.0 + left_s))
        router._totals["pair-0"] = ({"baseline": 50.0, "speculative": 64.0}, 64)  # a gain of ~3.6 s
        router.arrivals["pair-0"] = deque(now - 0.5 * i for i in range(8, 0, -1))  # 2 requests/s
        router._update_regime("pair-0", 17, None)  # not a recomputation: only the pending switch is priced
        waited = time.monotonic() - set_up  # the router read its clock within this (a busy machine: ~0.1 s)
        assert (_role(router) == "baseline") == switched
        floor = REMAINING_FLOOR * (1.0 + left_s)  # a request past its predicted end has this share left
        assert max(left_s - waited, floor) - 1e-6 <= router.prices["pair-0"].drain_s <= max(left_s, floor) + 1e-6
        assert router.regimes["pair-0"].pending == (None if switched else "baseline")


def test_a_switch_is_priced_at_the_load_the_arriving_server_will_carry() -> None:
    """Regression: at a flood's start (12.7 requests/s) a paid switch to speculation was priced with the group's
    recent mean load (~2) on the arriving server; it carried ~10 and the switch cost ~30 s against 1.6 s priced.
    The load it will carry is the arrival rate times a request's cost there (Little's law)."""
    import time
    from collections import deque

    from gateway.core.regime import SWITCH_INTERFERENCE

    set_up = time.monotonic()
    router, now = _pending_switch("baseline", 2, Running(set_up - 0.2, 1.0))
    router._totals["pair-0"] = ({"baseline": 64.0, "speculative": 48.0}, 64)  # 1.0 s and 0.75 s a request
    router.arrivals["pair-0"] = deque(now - 0.1 * i for i in range(20, 0, -1))  # ~10 requests/s
    before = time.monotonic()
    router._update_regime("pair-0", 17, None)
    after = time.monotonic()  # the router read its clock in between: on a busy machine, well after `now`
    price = router.prices["pair-0"]
    models: dict[Role, StepModel] = {"baseline": router.learner.step_model("baseline"),
                                     "speculative": router.learner.step_model("speculative")}

    def carried_at(t: float, load: float | None = None) -> float:  # the rate and the time left fall as the clock runs
        rate, left = 19 / (t - router.arrivals["pair-0"][0]), max(0.8 - (t - set_up), REMAINING_FLOOR)
        arriving = rate * 0.75 if load is None else load
        return switch_price([left, left], models, SWITCH_INTERFERENCE, "speculative", arriving, price.gain_s).cost_s

    assert carried_at(after) * 0.95 <= price.cost_s <= carried_at(before) * 1.05
    assert price.cost_s > 2 * carried_at(before, load=1.0)  # at the recent mean load: under half the price



def test_speculation_is_not_entered_at_a_load_the_cap_would_leave_it_at() -> None:
    """Held-out member 132 of the bursty family (a 13 requests/s flood): the mix asked for speculation, the switch
    paid its price at an arriving load of 21, and `leave_large_batch` (cap 16 by default) sent the regime back 1.6 s
    later, unpriced: two switches under load, 1.46x the better static over the trace. Entering is held while the
    load, the GPU's recent mean or Little's for the arriving server, is above the cap."""
    capped = dataclasses.replace(CFG, speculation_max_load=16.0)
    pending = next_regime(RegimeState("baseline"), 1.3, 20.0, capped)
    assert pending.pending == "speculative"
    paid = SwitchPrice(3.8, 24.8, 36.7, 20.8)  # member 132's switch: its gain above its price, Little's load 20.8
    held = settle(pending, 20.0, paid, capped, mean_load=10.0)
    assert (held.role, held.pending) == ("baseline", "speculative")  # still asked for, not taken
    assert settle(pending, 20.0, paid._replace(arriving_load=12.0), capped, mean_load=18.0).role == "baseline"
    entered = settle(pending, 20.0, paid._replace(arriving_load=12.0), capped, mean_load=10.0)
    assert entered.role == "speculative"
    assert leave_large_batch(entered, 10.0, 21.0, capped).role == "speculative"  # and the cap keeps it
    # an unknown arrival rate (the first requests) does not block; leaving speculation is never held by the cap
    assert settle(pending, 20.0, FREE._replace(arriving_load=math.inf), capped, mean_load=2.0).role == "speculative"
    leaving = next_regime(RegimeState("speculative"), 0.5, 30.0, capped)
    assert settle(leaving, 30.0, FREE, capped, mean_load=40.0).role == "baseline"


def test_a_request_just_routed_to_the_leaving_server_counts_in_the_switchs_price() -> None:
    """Regression (mixed-phases, 2026-12-05): the regime recomputes after a decision, before the request routed there
    is in flight. A switch to speculation was priced free (drain 0) the instant a 2-s code request had gone to the
    baseline, and the speculative regime's next four requests co-ran with it at half speed (0.74 s against 0.36)."""
    import time

    router, _ = _router_on_a_pair()
    now = time.monotonic()
    router.regimes["pair-0"] = RegimeState("baseline", since_s=now - 100.0, pending="speculative",
                                           pending_since_s=now - 1.0)
    router._early.clear()  # past its first decisions: the regime is priced after each decision, not before
    routed = router.route(_json_request(), "r0")
    assert routed is not None and routed.decision.role == "baseline"
    assert router.prices["pair-0"].drain_s > router.regime_config.free_drain_s
    assert _role(router) == "baseline"  # not free, and nothing gained yet to pay for it


def test_the_request_whose_decision_takes_a_switch_goes_to_the_arriving_server() -> None:
    """Regression (member 501 of the family, 2026-12-07): a switch is priced and taken after a decision, and the
    request decided was then sent to the server the GPU had just left. Live migration moves only requests in flight,
    so it stayed there alone: 3.1 s against 1.2 s on the baseline, the GPU time-shared all that while (the baseline's
    next requests ran 1.5-2x slower). It goes to the arriving server; a request routed by anything but the regime
    (a probe, an exception) keeps its server."""
    import time
    from collections import deque

    router, pool = _router_on_a_pair()
    now = time.monotonic()
    router.regimes["pair-0"] = RegimeState("speculative", since_s=now - 100.0, pending="baseline",
                                           pending_since_s=now - 1.0)
    router._early.clear()
    for b in pool.backends:  # the baseline busy (the GPU's load as its gauges read it): no exception to it
        b.inflight = 6 if b.role == "baseline" else 0
    router._totals["pair-0"] = ({"baseline": 20.0, "speculative": 64.0}, 64)  # a gain of ~14 s at 2 requests/s
    router.arrivals["pair-0"] = deque(now - 0.5 * i for i in range(8, 0, -1))
    routed = router.route(_json_request(), "r0")
    assert _role(router) == "baseline" and router.regimes["pair-0"].switches == 1
    assert routed is not None and routed.decision.role == "baseline"
    assert routed.decision.detail.endswith("the switch this decision took")  # the access log and header say so
    assert list(router.running["pair-0"]["speculative"]) == []
    assert list(router.running["pair-0"]["baseline"]) == [routed.running]


def test_speculation_stays_only_while_the_mix_reads_it_cheaper_than_the_leave_margin() -> None:
    """mixed-phases and member 207 of the family (2026-12-05 f): the baseline was 6.5-7% faster, the mix read
    0.95-1.05 after its first bet on speculation, and a symmetric band (leave below 1/1.05) kept the bet for the
    whole trace (1.07x). The baseline's cost does not hang on an acceptance estimate: with `leave_margin` 0 a
    speculative regime leaves once the mix no longer reads it cheaper; entering still needs 1.05."""
    symmetric = dataclasses.replace(CFG, leave_margin=0.05)
    strict = dataclasses.replace(CFG, leave_margin=0.0)
    held = RegimeState("speculative", since_s=0.0)
    assert next_regime(held, 0.97, 30.0, symmetric).pending is None
    assert next_regime(held, 0.97, 30.0, strict).pending == "baseline"
    assert next_regime(RegimeState(), 1.03, 30.0, strict).pending is None  # entering: the band as before


async def test_a_request_that_ends_is_no_longer_priced_as_running(gateway_factory: Any) -> None:
    """The wiring of the fix above: the entry a shared GPU's request leaves in the router's `running` is marked done
    when the request ends (the proxy's `finally`), answered or not."""
    from gateway.bench.kit.fake_vllm import FakeBackend, started_pair
    from gateway.state import AppState

    async with started_pair(FakeBackend) as (base, spec):
        gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="adaptive")
        router = gw.app[AppState.key].router
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="x", max_retries=0)
        for _ in range(3):
            await client.chat.completions.create(model="fake-model", max_tokens=4,
                                                 messages=[{"role": "user", "content": "hello"}])
        entries = [r for role in ("baseline", "speculative") for r in router.running["pair-0"][role]]
        assert len(entries) == 3 and all(r.done for r in entries)

