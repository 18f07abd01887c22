"""A shared GPU's regime in the GPU's own time: the free drain and the dwell stretch with a slower baseline step
(pure function and the router that applies it; no I/O: the pool is never started)."""

from __future__ import annotations

import dataclasses
import time
from collections import deque

import pytest

from gateway.backends import BackendPool
from gateway.core.costmodel import Role, StepModel
from gateway.core.learner import Learner
from gateway.core.regime import RegimeConfig, RegimeState, Running, on_gpu_time
from gateway.metrics import Metrics
from gateway.router import Router
from gateway.settings import Settings

CFG = RegimeConfig(switch_margin=0.05, min_dwell_s=10.0, externality_weight=1.0, decisive_margin=0.1,
                   free_drain_s=0.3, switch_cost_factor=1.0, speculation_max_load=16.0, time_step_s=0.005)


def test_the_free_drain_and_the_dwell_stretch_with_a_slower_step_and_never_shrink() -> None:
    slow = on_gpu_time(CFG, 4 * 0.0046)  # the emulated H200 pair slowed 4x
    assert slow.free_drain_s == pytest.approx(0.3 * 0.0184 / 0.005)
    assert slow.min_dwell_s == pytest.approx(10.0 * 0.0184 / 0.005)
    assert on_gpu_time(CFG, 0.0046) == CFG  # the H200 the seconds were set for (its step under the prior's)
    assert on_gpu_time(CFG, 0.0014) == CFG  # a faster GPU keeps them: never below what was measured to pay
    assert on_gpu_time(dataclasses.replace(CFG, time_step_s=float("inf")), 0.0184) == dataclasses.replace(
        CFG, time_step_s=float("inf"))  # off


def _slow_pair(gpu_time: bool) -> Router:
    """A pair whose learner knows the GPU 4x slower than the H200 (mixed-medium x4: a baseline step of 18.7 ms), in
    the baseline regime (held 100 s) with a switch to speculation pending for 1 s; two requests on the baseline
    server with 1 s left (~54 of its steps: within the H200's 0.3 s had it been 4x faster)."""
    s = Settings(baseline_urls=["http://127.0.0.1:9"], speculative_urls=["http://127.0.0.1:10"],
                 regime_gpu_time=gpu_time)
    slow: dict[Role, StepModel] = {"baseline": StepModel(4 * 0.0046, 4 * 0.000027),
                                   "speculative": StepModel(4 * 0.0065, 4 * 0.00004)}
    pool = BackendPool(s, Metrics())
    router = Router(s, pool, Learner(dataclasses.replace(s.learner_config(), priors=slow)))
    now = time.monotonic()
    router.regimes["pair-0"] = RegimeState("baseline", since_s=now - 100.0, pending="speculative",
                                           pending_since_s=now - 1.0)
    for b in pool.backends:
        b.inflight = 2 if b.role == "baseline" else 0
    router.running["pair-0"]["baseline"] = deque([Running(now - 1.0, 2.0)] * 2)
    router._totals["pair-0"] = ({"baseline": 64 * 2.4, "speculative": 64 * 2.0}, 64)  # speculation 20% cheaper
    router.arrivals["pair-0"] = deque(now - 0.7 * i for i in range(8, 0, -1))  # 1.4 requests/s (6/s at x1)
    return router


def test_a_slow_gpus_switch_is_free_on_a_drain_of_as_many_steps_as_the_h200s_free_one() -> None:
    """mixed-medium x4 (the emulated pair slowed 4x, the n-gram server 5% faster there): its switch to speculation
    stayed pending the whole run, the baseline never drained within 0.3 s (16 steps of 18.7 ms) and the gain over
    10 s counted a quarter of the requests it would at x1 against a co-running 4x as long (1.053x the better static).
    In the GPU's time the same switch is free where the 4x faster pair's would be."""
    for gpu_time, switched in ((True, True), (False, False)):
        router = _slow_pair(gpu_time)
        router._update_regime("pair-0", 17, None)  # not a recomputation: only the pending switch is priced
        price = router.prices["pair-0"]
        assert price.drain_s == pytest.approx(1.0, abs=0.05)
        assert (router.regimes["pair-0"].role == "speculative") == switched, price
