"""Regime choice for a shared GPU: hysteresis, dwell, and the mix deciding (not the first requests); pure functions,
and the router that feeds them (no I/O: its pool is never started)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from gateway.backends import BackendPool
from gateway.core.costmodel import Role, StepModel
from gateway.core.learner import Learner
from gateway.core.protocol import RequestView, request_view
from gateway.core.regime import (
    MixSample,
    RegimeConfig,
    RegimeState,
    capped_ratio,
    leave_large_batch,
    lull,
    mix_costs,
    mix_ratio,
    next_regime,
    settle,
    worth_probing,
)
from gateway.metrics import Metrics
from gateway.router import Router
from gateway.settings import Settings

MODELS: dict[Role, StepModel] = {"baseline": StepModel(0.005, 0.00004), "speculative": StepModel(0.0075, 0.00015)}
PREFILL: dict[Role, float] = {"baseline": 4e-5, "speculative": 4e-5}
CFG = RegimeConfig(switch_margin=0.05, min_dwell=8, externality_weight=1.0, decisive_margin=0.5, lull_load=1.0,
                   max_defer=32, speculation_max_load=24.0)


def step(s: RegimeState, ratio: float, n: int, carrier_load: float = 0.0) -> RegimeState:
    """One recomputation followed by a settle at the given load of the carrying server."""
    return settle(next_regime(s, ratio, n, CFG), n, carrier_load, CFG.lull_load, CFG)


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


def test_switches_only_outside_the_band_and_after_the_dwell() -> None:
    s = RegimeState()
    s = step(s, 1.04, 8)
    assert s.role == "baseline"  # inside the band
    s = step(s, 1.2, 16)
    assert (s.role, s.since, s.switches) == ("speculative", 16, 1)
    s = step(s, 0.9, 20)
    assert s.role == "speculative" and s.pending is None  # dwell not over, and 0.9 is not decisive
    s = step(s, 0.97, 24)
    assert s.role == "speculative"  # inside the band
    s = step(s, 0.9, 32)
    assert s.role == "baseline" and s.switches == 2


def test_a_decisive_ratio_does_not_wait_for_the_dwell() -> None:
    s = step(RegimeState(), 1.2, 8)
    assert s.role == "speculative"
    s = step(s, 0.6, 10)  # 1/0.6 = 1.67 > 1.5: decisive
    assert (s.role, s.switches) == ("baseline", 2)


def test_a_switch_waits_for_the_carrying_servers_lull_then_happens() -> None:
    s = step(RegimeState(), 1.2, 8, carrier_load=6)
    assert (s.role, s.pending, s.pending_since) == ("baseline", "speculative", 8)  # a full batch would drain
    s = settle(s, 9, 4, CFG.lull_load, CFG)
    assert s.role == "baseline"
    s = step(s, 1.3, 16, carrier_load=5)
    assert s.pending_since == 8  # still the same pending switch
    s = settle(s, 17, 1, CFG.lull_load, CFG)
    assert (s.role, s.since, s.pending) == ("speculative", 17, None)


def test_a_pending_switch_is_dropped_when_the_mix_returns_and_forced_after_max_defer() -> None:
    s = step(RegimeState(), 1.2, 8, carrier_load=6)
    s = step(s, 1.01, 16, carrier_load=6)
    assert s.pending is None and s.role == "baseline"
    s = step(s, 1.2, 24, carrier_load=6)
    s = settle(s, 24 + CFG.max_defer - 1, 6, CFG.lull_load, CFG)
    assert s.role == "baseline"
    s = settle(s, 24 + CFG.max_defer, 6, CFG.lull_load, CFG)
    assert s.role == "speculative"


def test_the_lull_follows_the_groups_recent_load() -> None:
    assert lull([], CFG) == CFG.lull_load
    assert lull([0, 1, 2], CFG) == CFG.lull_load
    assert lull([8, 10, 12], CFG) == 5.0


@given(st.lists(st.tuples(st.floats(0.5, 2.0), st.floats(0, 20)), min_size=1, max_size=60))
def test_a_ratio_inside_the_band_never_flips(steps: list[tuple[float, float]]) -> None:
    s = RegimeState()
    for i, (r, load) in enumerate(steps):
        before = s.role
        s = step(s, r, 8 * (i + 1), load)
        if 1 / 1.05 <= r <= 1.05:
            assert s.role == before and s.pending is None


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
    assert next_regime(RegimeState(), high, 100, CFG).pending is None  # baseline stays
    leaving = next_regime(RegimeState("speculative", 0), high, 100, CFG)
    assert leaving.pending == "baseline"  # and a speculative regime is asked to leave
    assert capped_ratio(None, 40.0, CFG) is None

    assert leave_large_batch(RegimeState("speculative", 0), 40.0, 7, CFG).role == "baseline"  # at once
    assert leave_large_batch(RegimeState("speculative", 0), 10.0, 7, CFG).role == "speculative"


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
