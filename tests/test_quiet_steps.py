"""Start-up step probes (`gateway/quiet_steps.py`): a shared GPU's idle server is measured, not borrowed at the
priors' ratio; the gateway is not ready until it is."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import aiohttp
import pytest

from gateway.bench.kit.inproc import until
from gateway.core.costmodel import Role, StepModel
from gateway.core.learner import Learner, Observation
from gateway.emulator import EmulatedPair
from gateway.quiet_steps import has_text, step_from_chunks
from gateway.settings import Settings
from gateway.state import AppState

PRIORS: dict[Role, StepModel] = {"baseline": StepModel(0.005, 0.00004), "speculative": StepModel(0.0075, 0.00015)}


def test_the_step_is_the_mean_gap_between_token_chunks() -> None:
    assert step_from_chunks([1.0, 1.005, 1.010, 1.015]) == pytest.approx(0.005)
    assert step_from_chunks([1.0, 1.005]) is None  # one gap says too little (the first may hold the prefill's tail)
    assert step_from_chunks([1.0, 1.0, 1.0]) is None


def test_only_chunks_with_text_are_steps() -> None:
    assert has_text(b'data: {"choices": [{"index": 0, "text": " two,"}]}\n')
    assert not has_text(b'data: {"choices": [{"index": 0, "text": "", "finish_reason": "length"}]}\n')
    assert not has_text(b'data: {"choices": [], "usage": {"completion_tokens": 24}}\n')
    for line in (b"data: [DONE]\n", b"\n", b"data: {not json\n", b"data: [1]\n", b'data: {"choices": [3]}\n'):
        assert not has_text(line)


def test_quiet_steps_of_an_idle_server_replace_the_priors_ratio() -> None:
    """Family member 510: the n-gram server never served, so its step at batch 1 was the baseline's at the priors'
    1.5x, where the emulated pair's is 1.4x; two probes of each server at start-up give the measured ratio."""
    lrn = Learner(dataclasses.replace(Settings().learner_config(), priors=PRIORS, base_ratio=None))
    for _ in range(30):  # the baseline serves: its own steps, at load 1
        lrn.observe(Observation("baseline", "structured", "greedy", 100, 101, 101, 0.02, 0.02 + 100 * 0.0046, 1, (),
                                None, False))
    borrowed = lrn.step_model("speculative").base_s / lrn.step_model("baseline").base_s
    assert borrowed > 1.48
    for _ in range(2):
        lrn.observe_quiet_step("baseline", 0.0046)
        lrn.observe_quiet_step("speculative", 0.0065)
    measured = lrn.step_model("speculative").base_s / lrn.step_model("baseline").base_s
    assert measured == pytest.approx(0.0065 / 0.0046, rel=0.03)


def test_a_quiet_step_that_is_not_a_number_teaches_nothing() -> None:
    lrn = Learner(dataclasses.replace(Settings().learner_config(), priors=PRIORS))
    for bad in (float("nan"), float("inf"), 0.0, -1.0):
        lrn.observe_quiet_step("speculative", bad)
    assert lrn.step_model("speculative") == PRIORS["speculative"]


async def test_the_gateway_measures_both_servers_before_it_is_ready(gateway_factory: Callable[..., Any]) -> None:
    async with EmulatedPair(profile="h200-ngram", time_scale=1.0) as pair:
        gw = await gateway_factory(baseline_urls=[pair.baseline_url], speculative_urls=[pair.speculative_url],
                                   startup_step_probes=3)
        state = gw.app[AppState.key]
        async with aiohttp.ClientSession() as session:
            async def ready() -> int:
                async with session.get(gw.url + "/ready") as resp:
                    return resp.status

            assert state.measuring_steps and await ready() == 503  # not ready while the GPU is being measured
            await until(lambda: not state.measuring_steps, 30)
            assert await ready() == 200
        steps = state.learner.state()["step_models"]
        assert isinstance(steps, dict)
        assert steps["speculative"]["observations"] == steps["baseline"]["observations"] == 2  # warm-ups not taught
        ratio = state.learner.step_model("speculative").base_s / state.learner.step_model("baseline").base_s
        assert 1.2 < ratio < 1.48  # the emulated H200 pair's own (~1.41), not the priors' 1.5
