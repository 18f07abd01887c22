"""The fleet cost terms: a server's queued prefill (`core.candidate.queued_prefill_tokens`) and the stall a
request's prefill imposes on the batch already there (`costmodel.predict(stall=True)`). Tables and properties."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import step_models

from gateway.bench.kit.inproc import fast_settings, start_gateway
from gateway.core.candidate import queued_prefill_tokens, scoring_candidates
from gateway.core.classify import ClassifierConfig, features
from gateway.core.costmodel import RequestShape, StepModel, predict
from gateway.core.policy import AdaptiveConfig, Candidate, Estimates, PolicyInput, RulesConfig, decide
from gateway.core.protocol import CHAT, request_view
from gateway.emulator import EmulatedFleet
from gateway.state import AppState

S = 1e-5  # seconds of prefill per prompt token


@pytest.mark.parametrize(
    ("queued", "expected"),
    [
        ((), 0.0),
        (((0.0, 1000),), 1000.0),  # just sent: all of it
        (((0.004, 1000),), 600.0),  # 4 ms of 10 ms prefilled
        (((0.02, 1000),), 0.0),  # long done
        (((0.02, 1000), (0.0, 500)), 500.0),  # the first drained before the second came
        (((0.005, 1000), (0.0, 1000)), 1500.0),  # the second queues behind the first's last 500
        (((0.005, 1000), (0.005, 1000), (0.0, 0)), 1500.0),  # sent together; a prompt-less request adds nothing
    ],
)
def test_queued_prefill_table(queued: tuple[tuple[float, int], ...], expected: float) -> None:
    assert queued_prefill_tokens(queued, S) == pytest.approx(expected)


sends = st.lists(st.tuples(st.floats(0.0, 5.0), st.integers(0, 32768)), max_size=12).map(
    lambda xs: tuple(sorted(xs, key=lambda x: -x[0])))  # oldest first


@given(sends, st.floats(0.0, 5.0), st.integers(0, 32768), st.floats(1e-6, 1e-3))
def test_another_prompt_in_flight_never_leaves_fewer_tokens(queued: tuple[tuple[float, int], ...], age: float,
                                                           tokens: int, s: float) -> None:
    more = tuple(sorted((*queued, (age, tokens)), key=lambda x: -x[0]))
    assert queued_prefill_tokens(more, s) >= queued_prefill_tokens(queued, s) - 1e-6


@given(sends, st.floats(0.0, 2.0), st.floats(1e-6, 1e-3))
def test_time_only_drains_the_queue(queued: tuple[tuple[float, int], ...], later: float, s: float) -> None:
    aged = tuple((age + later, tokens) for age, tokens in queued)
    now = queued_prefill_tokens(queued, s)
    assert queued_prefill_tokens(aged, s) <= now + 1e-6
    assert now <= sum(tokens for _, tokens in queued) + 1e-6


@given(step_models, st.floats(0, 64), st.floats(0, 2e5), st.floats(0, 2e5), st.integers(1, 32768),
       st.floats(1, 1024), st.floats(1, 5), st.booleans())
def test_more_queued_prefill_never_makes_a_server_look_better(model: StepModel, load: float, q1: float, q2: float,
                                                              prompt: int, output: float, tps: float,
                                                              stall: bool) -> None:
    lo, hi = sorted((q1, q2))
    shape = RequestShape(prompt, output, tps)
    a = predict(shape, load, model, 0.0, 4e-5, (), lo, stall=stall)
    b = predict(shape, load, model, 0.0, 4e-5, (), hi, stall=stall)
    assert b.ttft_s >= a.ttft_s and b.e2e_s >= a.e2e_s and b.cost(1.0) >= a.cost(1.0)


@given(step_models, st.floats(0, 64), st.floats(0, 64), st.integers(1, 32768), st.floats(1, 1024), st.floats(0, 1e5))
def test_a_busier_server_never_looks_cheaper_with_the_stall(model: StepModel, l1: float, l2: float, prompt: int,
                                                            output: float, queued: float) -> None:
    lo, hi = sorted((l1, l2))
    shape = RequestShape(prompt, output, 1.0)
    assert (predict(shape, hi, model, 0.0, 4e-5, (), queued, stall=True).cost(1.0)
            >= predict(shape, lo, model, 0.0, 4e-5, (), queued, stall=True).cost(1.0))


def test_the_stall_is_what_our_prefill_costs_everyone_already_there() -> None:
    model = StepModel(0.005, 0.0)
    plain = predict(RequestShape(1400, 100, 1.0), 8, model, 0.0, 2.5e-5)
    stalled = predict(RequestShape(1400, 100, 1.0), 8, model, 0.0, 2.5e-5, stall=True)
    assert stalled.e2e_s == plain.e2e_s
    assert stalled.externality_s - plain.externality_s == pytest.approx(8 * 1400 * 2.5e-5)


CFG = AdaptiveConfig(margin=0.05, explore_rate=0.0, explore_max_regret=1.0, explore_max_output_tokens=1.0,
                     explore_min_observations=0, explore_unmeasured_max_regret=1.0, explore_unmeasured_rate=0.0,
                     externality_weight=1.0, exception_load=2.0, exception_margin=0.2, exception_arrivals=0.2,
                     probe_max_load=16.0, thompson=False)
RULES = RulesConfig(("structured",), 0.7, 2000, 16)
STEP = StepModel(0.006, 0.00007)


def _input(prompt_tokens: int, candidates: tuple[Candidate, ...], tps: float = 1.6, output: float = 120,
           **extra: Any) -> PolicyInput:
    body = {"model": "m", "messages": [{"role": "user", "content": "w " * (prompt_tokens * 2)}], "max_tokens": 512,
            "temperature": 0.7}
    f = features(request_view(CHAT, body), ClassifierConfig(0.8, 100000, 4.0, 256))
    spec = StepModel(STEP.base_s * 1.8, STEP.per_request_s * 2)
    est = Estimates(output_tokens=output, tokens_per_step=tps, step_models={"baseline": STEP, "speculative": spec},
                    interference={"baseline": 0.2, "speculative": 1.0},
                    prefill_s_per_token={"baseline": 2.5e-5, "speculative": 2.5e-5}, speculative_observations=9,
                    bucket_speculative_observations=9)
    return PolicyInput(features=f, task_class="chat", bucket="high", candidates=candidates, estimates=est, **extra)


def test_long_prompts_balance_prefill_tokens_not_request_counts() -> None:
    """Two baseline servers with one request each: the one with a 13k-token prompt just sent is not the place for
    the next 13k-token prompt; the one whose prompt is long prefilled is (cause 2 of results/peers-2026-12-05)."""
    fleet = (Candidate("baseline-0", "baseline", "g0", 1.0, (), ((0.01, 13000),)),
             Candidate("baseline-1", "baseline", "g1", 1.0, (), ((2.0, 13000),)))
    assert scoring_candidates(fleet, {}, 2.0) == fleet  # both scored: equal counts, unequal queues
    d = decide("adaptive", _input(13000, fleet), RULES, CFG)
    assert d is not None and d.backend == "baseline-1"
    d = decide("adaptive", _input(13000, fleet[::-1]), RULES, CFG)
    assert d is not None and d.backend == "baseline-1"
    # and a server one request busier but with nothing left to prefill beats one with two prompts queued
    busier = (Candidate("baseline-0", "baseline", "g0", 2.0, (), ((0.0, 13000), (0.0, 13000))),
              Candidate("baseline-1", "baseline", "g1", 3.0, (), ((5.0, 13000), (4.0, 13000), (3.0, 13000))))
    d = decide("adaptive", _input(13000, busier), RULES, CFG)
    assert d is not None and d.backend == "baseline-1"


def test_a_ttft_weight_moves_a_short_prompt_off_a_queue_it_would_decode_faster_behind() -> None:
    """`fleet_ttft_weight` (`ttft_weight` where a GPU is shared) counts the first token again: a short prompt behind
    another's 13k-token prefill (0.33 s) on a quiet server, or on an idle-queued server 18 requests busier (slower
    steps, dearer to join). By e2e the queue wins; with TTFT counted twice the busy server does. On a fleet the
    shared-GPU weight does nothing."""
    fleet = (Candidate("baseline-0", "baseline", "g0", 1.0, (), ((0.0, 13000),)),
             Candidate("baseline-1", "baseline", "g1", 18.0, ()))
    assert CFG.ttft_weight == 0.0 and CFG.fleet_ttft_weight == 0.0
    d = decide("adaptive", _input(200, fleet), RULES, CFG)
    assert d is not None and d.backend == "baseline-0"
    d = decide("adaptive", _input(200, fleet), RULES, dataclasses.replace(CFG, fleet_ttft_weight=1.0))
    assert d is not None and d.backend == "baseline-1"
    d = decide("adaptive", _input(200, fleet), RULES, dataclasses.replace(CFG, ttft_weight=1.0))
    assert d is not None and d.backend == "baseline-0"


def test_the_decision_says_how_much_prefill_it_priced_ahead_of_the_request() -> None:
    """`Decision.queued_tokens` is the queue the chosen server's prediction drained (the learner nets it out of the
    request's time to first token); none on a shared GPU."""
    fleet = (Candidate("baseline-0", "baseline", "g0", 1.0, (), ((0.1, 13000),)),)
    d = decide("adaptive", _input(13000, fleet), RULES, CFG)
    assert d is not None and d.queued_tokens == pytest.approx(13000 - 0.1 / 2.5e-5)
    pair = (Candidate("baseline-0", "baseline", "gpu0", 2.0, (("speculative", 0.0),), ((0.0, 30000),)),
            Candidate("speculative-0", "speculative", "gpu0", 0.0, (("baseline", 2.0),)))
    d = decide("adaptive", _input(1400, pair, regimes={"gpu0": "baseline"}), RULES, CFG)
    assert d is not None and d.queued_tokens == 0.0


def test_piling_onto_the_faster_role_stops_where_its_batch_costs_more_than_speculation_loses() -> None:
    """A chat request the speculative server is slower for (1.6 tokens a step at 1.8× the step): to a quiet
    baseline, but not to a baseline running 12 requests while a speculative server idles (cause 1)."""
    def fleet(base_load: float) -> tuple[Candidate, ...]:
        return (Candidate("baseline-0", "baseline", "g0", base_load), Candidate("speculative-0", "speculative", "g1",
                                                                                0.0))
    quiet = decide("adaptive", _input(1400, fleet(1.0)), RULES, CFG)
    assert quiet is not None and quiet.role == "baseline"
    busy = decide("adaptive", _input(1400, fleet(12.0)), RULES, CFG)
    assert busy is not None and busy.role == "speculative"


def test_a_shared_gpu_ignores_the_queue() -> None:
    """On a pair's GPU the cost model is as it was: the queued prompts of a candidate with co-runners change
    nothing (the pair's regime prices what it shares)."""
    pair = (Candidate("baseline-0", "baseline", "gpu0", 2.0, (("speculative", 0.0),)),
            Candidate("speculative-0", "speculative", "gpu0", 0.0, (("baseline", 2.0),)))
    queued = (pair[0]._replace(queued=((0.0, 30000),)), pair[1])
    a = decide("adaptive", _input(1400, pair, regimes={"gpu0": "baseline"}), RULES, CFG)
    b = decide("adaptive", _input(1400, queued, regimes={"gpu0": "baseline"}), RULES, CFG)
    assert a is not None and b is not None
    assert (a.backend, a.predicted_e2e_s, a.ratio) == (b.backend, b.predicted_e2e_s, b.ratio)


@pytest.mark.asyncio
async def test_the_gateway_queues_each_prompt_where_it_sent_it_and_forgets_it_when_done() -> None:
    """Two baseline servers of their own, six long prompts at once: the pool's per-backend queue holds each
    request's prompt while it is in flight (the decisions read it) and is empty once all have answered."""
    async with EmulatedFleet(["baseline", "baseline"], time_scale=0.2) as fleet:
        gw = await start_gateway(fast_settings(backends=fleet.backends_setting().split(","), policy="adaptive",
                                               random_seed=1, prefix_aware=False))
        pool = gw.app[AppState.key].router.pool
        seen: list[tuple[str, int]] = []
        try:
            async with aiohttp.ClientSession() as s:
                async def one(i: int) -> str:
                    body = {"model": "specgate-emu", "max_tokens": 64, "temperature": 0, "stream": True,
                            "messages": [{"role": "user", "content": f"{i} " + "lorem ipsum dolor " * 1500}]}
                    async with s.post(gw.url + "/v1/chat/completions", json=body) as r:
                        assert r.status == 200
                        seen.append((r.headers["x-specgate-instance"], sum(len(b.sent) for b in pool.backends)))
                        await r.read()
                        return r.headers["x-specgate-instance"]

                where = await asyncio.gather(*(one(i) for i in range(6)))
            assert set(where) == {"baseline-0", "baseline-1"}
            assert max(n for _, n in seen) >= 1  # prompts were queued while in flight
            assert all(not b.sent and b.inflight == 0 for b in pool.backends)
        finally:
            await gw.runner.cleanup()


def test_requests_other_clients_left_waiting_join_the_prefill_queue() -> None:
    """`vllm:num_requests_waiting` counts every client's requests; those beyond this process's own in flight are
    others', and wait for their prefill ahead of ours: priced at this process's mean prompt there, a server with
    three foreign 12k-token prompts waiting is not where the next long prompt goes."""
    from gateway.backends import BackendPool
    from gateway.core.learner import Learner
    from gateway.core.vllm_metrics import VllmSnapshot
    from gateway.metrics import Metrics
    from gateway.router import Router
    from gateway.settings import Settings

    s = Settings(backends=["baseline=http://127.0.0.1:9@g0", "baseline=http://127.0.0.1:10@g1"], prefix_aware=False)
    router = Router(s, BackendPool(s, Metrics()), Learner(s.learner_config()))
    pool = router.pool
    busy, quiet = pool.backends
    now = time.monotonic()
    for b in (busy, quiet):  # each served a 12k-token prompt before (the mean prompt this process sends there)
        pool.acquire(b, 12000)
        pool.release(b)
    ours = dict((c.name, c) for c in router.view.candidates(now, frozenset()))
    assert not ours[busy.name].queued  # nothing in flight, no scrape: no queue
    busy.snapshot, busy.scraped_load, busy.scraped_at = VllmSnapshot(running=1, waiting=3), 4.0, now
    busy.dispatched_at_scrape, busy.completed_at_scrape = busy.dispatched, busy.completed
    quiet.snapshot, quiet.scraped_load, quiet.scraped_at = VllmSnapshot(running=0, waiting=0), 0.0, now
    quiet.dispatched_at_scrape, quiet.completed_at_scrape = quiet.dispatched, quiet.completed
    seen = dict((c.name, c) for c in router.view.candidates(now, frozenset()))
    assert seen[busy.name].queued == ((0.0, 36000),)
    assert not seen[quiet.name].queued
    pool.acquire(busy, 12000)  # and one of ours: it may be among the waiting, which counts only those beyond it
    busy.snapshot = VllmSnapshot(running=1, waiting=4)
    assert sorted(t for _, t in router.view.candidates(now, frozenset())[0].queued) == [12000, 36000]
    view = request_view(CHAT, {"model": "m", "max_tokens": 64, "messages": [{"role": "user", "content": "w " * 9000}]})
    routed = router.route(view, "r1")
    assert routed is not None and routed.decision.backend == quiet.name
