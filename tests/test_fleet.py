"""Fleets: topology from settings, emulated fleets, and load that every replica agrees on."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import pytest

from gateway.backends import BackendPool
from gateway.bench.kit.inproc import RunningGateway, fast_settings, start_gateway, until
from gateway.core.learner import Learner
from gateway.core.protocol import request_view
from gateway.emulator import EmulatedFleet, parse_layout
from gateway.metrics import Metrics
from gateway.router import MixRatios, Router
from gateway.settings import BackendSpec, Settings, parse_backend
from gateway.state import AppState

FAST = 0.2  # 5x faster than real time


def test_topology_defaults_and_explicit_groups() -> None:
    pair = Settings(baseline_urls=["http://a:1"], speculative_urls=["http://b:2"]).topology()
    assert [(s.name, s.group) for s in pair] == [("baseline-0", "pair-0"), ("speculative-0", "pair-0")]
    uneven = Settings(baseline_urls=["http://a:1", "http://c:3"], speculative_urls=["http://b:2"]).topology()
    assert [s.group for s in uneven] == ["pair-0", "gpu-baseline-1", "pair-0"]
    fleet = Settings(backends=["baseline=http://a:1", "speculative=http://b:2@g1",
                               "baseline=http://u:p@c:3@g1"]).topology()
    assert fleet == [BackendSpec("baseline", "http://a:1", "gpu-baseline-0", "baseline-0"),
                     BackendSpec("speculative", "http://b:2", "g1", "speculative-0"),
                     BackendSpec("baseline", "http://u:p@c:3", "g1", "baseline-1")]
    for bad in ("draft=http://a:1", "baseline", "baseline=ftp://a"):
        with pytest.raises(ValueError):
            parse_backend(bad)
    with pytest.raises(ValueError):
        Settings(policy="fastest")
    assert parse_layout("pair,2xbaseline") == ["pair", "baseline", "baseline"]
    with pytest.raises(ValueError):
        parse_layout("pair,gpu")


@pytest.mark.asyncio
async def test_replicas_route_on_the_load_the_server_reports() -> None:
    """Two gateways in front of one server: requests sent through one are load the other routes on."""
    body = {"model": "specgate-emu", "messages": [{"role": "user", "content": "Write a long story about a cat."}],
            "max_tokens": 400, "temperature": 1.0, "stream": True}
    async with EmulatedFleet(["baseline", "speculative"], time_scale=FAST) as fleet:
        settings = fast_settings(backends=fleet.backends_setting().split(","), load_scrape_interval_s=0.05,
                                 policy="baseline")
        a, b = await start_gateway(settings), await start_gateway(settings)
        try:
            pool_b = b.app[AppState.key].pool
            busy = pool_b.backends[0]
            assert busy.role == "baseline" and busy.group != pool_b.backends[1].group
            async with aiohttp.ClientSession() as session:
                async def one() -> None:
                    async with session.post(a.url + "/v1/chat/completions", json=body) as r:
                        assert r.status == 200
                        await r.read()

                tasks = [asyncio.create_task(one()) for _ in range(6)]
                await until(lambda: pool_b.load(busy, time.monotonic()) >= 5)
                assert busy.inflight == 0  # b sent nothing itself
                async with session.get(b.url + "/admin/state") as r:
                    state = await r.json()
                row = next(x for x in state["backends"] if x["name"] == busy.name)
                assert row["routing_load"] >= 5 and row["group"] == busy.group
                await asyncio.gather(*tasks)
                await until(lambda: pool_b.load(busy, time.monotonic()) == 0)
        finally:
            await _stop(a, b)


@pytest.mark.asyncio
async def test_adaptive_on_a_fleet_sends_each_request_to_a_backend_it_names() -> None:
    body = {"model": "specgate-emu", "messages": [{"role": "user", "content": "Return JSON with keys a, b."}],
            "max_tokens": 32, "temperature": 0}
    async with EmulatedFleet(parse_layout("baseline,speculative,pair"), time_scale=FAST) as fleet:
        gw = await start_gateway(fast_settings(backends=fleet.backends_setting().split(","), random_seed=3))
        try:
            names: set[str] = set()
            async with aiohttp.ClientSession() as session:
                for _ in range(12):
                    async with session.post(gw.url + "/v1/chat/completions", json=body) as r:
                        assert r.status == 200
                        names.add(r.headers["x-specgate-instance"])
                        reason = r.headers["x-specgate-reason"]
                        assert "@gpu" in reason or reason.startswith(("regime_", "explore")), reason
                async with session.get(gw.url + "/ready") as r:
                    groups = {x["name"]: x["group"] for x in (await r.json())["backends"]}
            assert groups == {"baseline-0": "gpu0", "speculative-0": "gpu1", "baseline-1": "gpu2",
                              "speculative-1": "gpu2"}
            assert names <= set(groups)
            assert set(gw.app[AppState.key].router.regimes) == {"gpu2"}
        finally:
            await _stop(gw)


async def _stop(*gateways: RunningGateway) -> None:
    for gw in gateways:
        await gw.runner.cleanup()


def _fleet_router(pairs: int) -> Router:
    s = Settings(baseline_urls=[f"http://127.0.0.1:{9 + i}" for i in range(pairs)],
                 speculative_urls=[f"http://127.0.0.1:{100 + i}" for i in range(pairs)])
    return Router(s, BackendPool(s, Metrics()), Learner(s.learner_config()))


JSON_VIEW = request_view("/v1/chat/completions", {"model": "m", "max_tokens": 64,
                                                  "messages": [{"role": "user", "content": "Return JSON: {}"}]})


def _count_mix_computations(router: Router) -> dict[str, int]:
    """Count each group's mix-ratio computations from now on (group -> count, filled as they happen)."""
    visits: dict[str, int] = {}
    inner = router._mix_ratio_of

    def counting(group: str, extra: Any, mean_load: float) -> MixRatios:
        visits[group] = visits.get(group, 0) + 1
        return inner(group, extra, mean_load)

    router._mix_ratio_of = counting  # type: ignore[method-assign]
    return visits


def test_idle_groups_of_a_fleet_share_one_mix_computation_per_request() -> None:
    """Every request visits the groups still in their first decisions; a fleet whose traffic lands on one group
    kept the others there for good, and each request paid a mix computation per idle group (8 pairs at c = 1:
    +0.2 ms of CPU per request). They all see the same one-request mix: it is computed once."""
    router = _fleet_router(8)
    visits = _count_mix_computations(router)
    view = JSON_VIEW
    requests = 30
    for i in range(requests):
        router.route(view, f"r{i}")
    busy = [g for g, n in router.group_decisions.items() if n]
    assert len(busy) < 8  # the traffic left idle groups behind
    # the busy group's own, its regular recomputations, one shared for the idle
    assert sum(visits.values()) <= 3 * requests
    single = _fleet_router(1)
    single.route(view, "r0")
    idle = [g for g, n in router.group_decisions.items() if not n]
    assert {router.regimes[g].ratio for g in idle} == {single.regimes["pair-0"].ratio}


def test_a_group_the_traffic_passes_by_stops_recomputing_its_regime() -> None:
    """Idle groups with different loads cannot share one mix; after REGIME_EARLY requests routed elsewhere a
    group waits for a decision of its own (with 8 pairs at different loads each request paid 7 mixes: the
    fleet cost +0.3 ms of CPU per request at c = 1)."""
    from gateway.router import REGIME_EARLY

    router = _fleet_router(8)
    for i, b in enumerate(router.pool.backends):
        b.inflight = 1 + i  # every group at its own load; pair-0 the least loaded
    visits = _count_mix_computations(router)
    for i in range(4 * REGIME_EARLY):
        router.route(JSON_VIEW, f"r{i}")
    idle = [g for g, n in router.group_decisions.items() if not n]
    assert idle
    assert all(visits.get(g, 0) <= REGIME_EARLY for g in idle), visits


def test_a_flood_recomputes_the_mix_at_most_every_min_interval() -> None:
    """After its first decisions a group's mix is recomputed every 8 decisions, but no more often than
    `regime_min_interval_s`: at 1,700 requests/s the recomputations cost ~5% of a request's CPU."""
    from gateway.router import REGIME_EARLY

    def visits(min_interval_s: float) -> int:
        s = Settings(baseline_urls=["http://127.0.0.1:9"], speculative_urls=["http://127.0.0.1:10"],
                     regime_min_interval_s=min_interval_s)
        router = Router(s, BackendPool(s, Metrics()), Learner(s.learner_config()))
        visits = _count_mix_computations(router)
        for i in range(REGIME_EARLY + 80):
            router.route(JSON_VIEW, f"r{i}")
        return sum(visits.values())

    assert visits(0.0) >= REGIME_EARLY + 80 // 8 - 1  # every eighth decision
    assert visits(3600.0) == REGIME_EARLY  # the first decisions only: the interval has not passed since


def test_a_backends_candidate_is_reused_only_while_its_loads_are_unchanged() -> None:
    """`Router.candidates` keeps each backend's `Candidate` between decisions and rebuilds it when its own load or a
    co-runner's load moved: a stale co-runner load would price a busy GPU as idle."""
    router = _fleet_router(2)
    pool = router.pool
    now = time.monotonic()
    first = {c.name: c for c in router.view.candidates(now, frozenset())}
    again = {c.name: c for c in router.view.candidates(now, frozenset())}
    assert all(again[name] is first[name] for name in first)  # nothing moved: the same objects
    busy = pool.backends[0]
    pool.acquire(busy)
    moved = {c.name: c for c in router.view.candidates(now, frozenset())}
    assert moved[busy.name].load == 1.0
    co = pool.co_members[busy.name][0]
    assert dict(moved[co.name].co_runners)[busy.role] == 1.0  # its co-runner sees the new load too
    others = [b.name for b in pool.backends if b.group != busy.group]
    assert all(moved[name] is first[name] for name in others)
    pool.release(busy)
    back = {c.name: c for c in router.view.candidates(now, frozenset())}
    assert back[busy.name].load == 0.0 and dict(back[co.name].co_runners)[busy.role] == 0.0
    assert busy.name not in {c.name for c in router.view.candidates(now, frozenset({busy}))}
    # nothing moved: one tuple
    assert router.view.candidates(now, frozenset()) is router.view.candidates(now, frozenset())
    # a backend out of rotation while its load moves is rebuilt when it is back, not served from before
    out = pool.backends[2]
    router.view.candidates(now, frozenset({out}))
    pool.acquire(out)
    router.view.candidates(now, frozenset({out}))
    assert {c.name: c for c in router.view.candidates(now, frozenset())}[out.name].load == 1.0


def test_bench_decision_reports_the_fleets_route_excess(capsys: pytest.CaptureFixture[str]) -> None:
    """`specgate bench-decision --backends 16 --against 2`: the number behind the fleet's per-request cost."""
    from gateway.bench import decision

    assert decision.main(["-n", "50", "--backends", "4", "--layout", "pairs", "--idle", "--against", "2",
                          "--rounds", "1"]) == 0
    line = capsys.readouterr().out
    assert "2 backends" in line and "4 backends" in line and "excess" in line, line
