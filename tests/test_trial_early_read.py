"""A trial of the speculative server (started on hope) is judged on its running streams' acceptance, read at their
16th decode step, not only on answers that have ended: the learner counts such an early read as one answer, and
reads only the rest when the answer ends (no token counted twice). Pure learner checks, then the gateway in front
of an emulated pair."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai

from gateway.bench.kit.inproc import RunningGateway, until
from gateway.core.learner import Learner
from gateway.core.observation import Observation
from gateway.core.regime import RegimeState
from gateway.emulator import EmulatedPair
from gateway.settings import Settings
from gateway.state import AppState

GROUP = "pair-0"


def _answer(tokens: int, steps: int, read_early: tuple[int, int] | None = None) -> Observation:
    return Observation(role="speculative", task_class="json", bucket="short", prompt_tokens=200,
                       completion_tokens=tokens, steps=steps, ttft_s=0.05, e2e_s=1.0, load_self=1.0,
                       read_early=read_early)


def test_an_early_read_counts_once_and_the_end_reads_only_the_rest() -> None:
    learner = Learner(Settings().learner_config())
    learner.observe_early("json", "short", 200, tokens=49, steps=17)  # 48 tokens in 16 decode steps: 3 a step
    assert learner.served_acceptance == 1
    assert learner.speculative_observations("json", "short") == 1
    after_early = learner.tokens_per_step("json", "short")
    learner.observe(_answer(97, 33, read_early=(49, 17)))  # the rest: 48 tokens in 16 steps, 3 a step again
    assert learner.served_acceptance == 1  # the same answer, not a second
    assert learner.speculative_observations("json", "short") == 2
    assert learner.tokens_per_step("json", "short") > after_early  # read at 3 a step again, not at the whole's
    ended_at_the_read = Learner(Settings().learner_config())
    ended_at_the_read.observe_early("json", "short", 200, tokens=49, steps=17)
    ended_at_the_read.observe(_answer(49, 17, read_early=(49, 17)))  # nothing after the read: nothing more
    assert ended_at_the_read.speculative_observations("json", "short") == 1


def test_a_read_too_short_to_judge_is_not_taken() -> None:
    learner = Learner(Settings().learner_config())
    learner.observe_early("json", "short", 200, tokens=1, steps=1)
    assert learner.served_acceptance == 0 and learner.speculative_observations("json", "short") == 0


async def _stream(client: openai.AsyncOpenAI, rid: str) -> str:
    stream = await client.chat.completions.create(
        model="specgate-emu", messages=[{"role": "user", "content": f"Return the record as JSON ({rid})."}],
        temperature=0, max_tokens=1000, stream=True, extra_headers={"x-request-id": rid})
    return "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])


async def test_a_trials_running_stream_is_read_before_it_ends(gateway_factory: Callable[..., Any]) -> None:
    """Through the gateway (live migration on, as shipped): a stream on the speculative server while the regime is
    a trial is read once at its 16th decode step and once more for the rest when it ends; outside a trial only at
    its end."""
    text = " ".join(f'{{"id": {i}, "name": "item {i}"}}' for i in range(30))
    async with EmulatedPair(profile="h200-ngram", time_scale=0.25) as pair:
        pair.register_references({"t": text, "n": text})
        gw: RunningGateway = await gateway_factory(
            baseline_urls=[pair.baseline_url], speculative_urls=[pair.speculative_url], policy="speculative",
            migration=True)
        state = gw.app[AppState.key]
        learner, router = state.learner, state.router
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0, timeout=60)
        router.regimes[GROUP] = RegimeState("speculative", trial=True)
        assert await _stream(client, "t") == text
        await until(lambda: learner.served_acceptance >= 1, 10)
        cls = next(k for k in learner.class_estimates() if learner.speculative_observations(*k))
        assert learner.served_acceptance == 1
        assert learner.speculative_observations(*cls) == 2  # the early read and the rest
        router.regimes[GROUP] = RegimeState("speculative")  # a regime on evidence: read at the end only
        assert await _stream(client, "n") == text
        await until(lambda: learner.served_acceptance >= 2, 10)
        assert learner.speculative_observations(*cls) == 3
        await client.close()
