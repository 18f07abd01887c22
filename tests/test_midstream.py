"""Mid-stream moves on a fleet (`SPECGATE_MIDSTREAM_MOVES`): a request on a speculative server whose own recent
tokens per step make staying dearer than a re-prefill on a baseline server moves there. The pure rule
(`gateway.core.midstream`) by tables, then through a real gateway in front of an emulated 1 + 1 fleet with the
`openai` SDK: an answer the n-gram drafts miss moves once and arrives whole, one they hit stays."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import Any

import openai
import pytest

from gateway.bench.kit.inproc import RunningGateway, until
from gateway.core.midstream import Destination, MidstreamConfig, Running, StepWindow, due, judge, remaining_tokens
from gateway.emulator import EmulatedFleet, EmulatedPair
from gateway.emulator.text import tokenize
from gateway.settings import Settings
from gateway.state import AppState

CFG = MidstreamConfig()
BASELINE = Destination(step_s=0.0048, others=0.0, per_request_s=0.0001, prefill_s=0.002)


def _running(tps: float, tokens: int = 40, budget: int | None = None, others: float = 0.0) -> Running:
    return Running(tokens, round(tps * 8), 8, budget, step_s=0.0066, others=others, per_request_s=0.00017)


@pytest.mark.parametrize(("tps", "moves"), [
    (1.0, True),  # every draft rejected: 6.6 ms a token against 4.8 ms
    (1.25, True),
    (1.5, False),  # 4.4 ms a token: above the break-even (6.6 / 4.8 = 1.375)
    (3.0, False),
])
def test_a_request_moves_when_its_own_tokens_per_step_are_below_the_break_even(tps: float, moves: bool) -> None:
    call = judge(_running(tps), BASELINE, CFG)
    assert call.move is moves
    assert call.tokens_per_step == pytest.approx(round(tps * 8) / 8)
    assert call.reason().startswith("move" if moves else "stay")


def test_the_remaining_length_is_what_it_has_made_capped_by_its_budget() -> None:
    assert remaining_tokens(40, None) == 40.0
    assert remaining_tokens(40, 10) == 10.0
    assert judge(_running(1.0, budget=10), BASELINE, CFG).remaining_tokens == 10.0
    # a resume needs a token of budget: a request at its last token never moves
    assert not judge(_running(1.0, budget=1), BASELINE, CFG).move


def test_the_destinations_co_runners_pay_the_prefill_and_a_short_request_stays() -> None:
    big = Destination(step_s=0.0048, others=0.0, per_request_s=0.0001, prefill_s=0.05)  # a 2,000-token prompt
    assert judge(_running(1.0, tokens=200), big, CFG).move  # 1.3 s left: worth 50 ms
    assert not judge(_running(1.0, tokens=16), big, CFG).move  # 16 tokens left: 50 ms costs more than it saves
    crowded = Destination(step_s=0.0048, others=8.0, per_request_s=0.0001, prefill_s=0.02)
    assert judge(_running(1.0, tokens=200), BASELINE, CFG).move
    assert not judge(_running(1.0, tokens=40), crowded, CFG).move  # 8 co-runners stall through the prefill


def test_the_margin_asks_for_a_larger_predicted_gain() -> None:
    assert judge(_running(1.25), BASELINE, CFG).move
    assert not judge(_running(1.25), BASELINE, MidstreamConfig(margin=0.5)).move


def test_the_window_counts_steps_from_the_usage_and_keeps_the_last_ones() -> None:
    w = StepWindow(size=4)
    assert not w.feed(0)  # the role chunk: no token yet
    assert w.feed(1) and w.steps == 0  # the prefill's token: not a decode step
    assert not w.feed(1)  # an event without a new token (a held-back stop, the finish chunk)
    for tokens in (2, 3, 7, 11, 12):  # steps of 1, 1, 4, 4, 1 tokens
        assert w.feed(tokens)
    assert w.steps == 5 and w.recent() == (12 - 2, 4)  # the last 4 steps: 1 + 4 + 4 + 1
    assert not due(7, 0, MidstreamConfig(every=8, window=8))
    assert due(8, 0, MidstreamConfig(every=8, window=8)) and not due(12, 8, MidstreamConfig(every=8, window=8))
    assert due(16, 8, MidstreamConfig(every=8, window=8))


# --- through the gateway

def _unrepeated(n: int) -> str:
    """An answer in which no 2-token sequence repeats (the n-gram lookup finds nothing: 1 token a step)."""
    return " ".join(f"w{i}x{i * 7 % 13}" for i in range(n))


def _event(message: str) -> object:
    return json.loads(message).get("event") if message.startswith("{") else None


DOC = " ".join(f"The item number {i} of the inventory is kept in room {i % 9} on shelf {i % 5}." for i in range(40))


async def _one(gateway_factory: Callable[..., Any], caplog: pytest.LogCaptureFixture, moves: bool, reference: str,
               content: str) -> tuple[str, int, list[dict[str, Any]], str, float]:
    """One streamed request through a 1 + 1 fleet whose policy sends everything to the speculative server: the text
    the client got, the acceptance moves counted, the access-log lines, the instance that answered first, and the
    learner's tokens per step for its class after it."""
    async with EmulatedFleet(["baseline", "speculative"], time_scale=0.25) as fleet:
        fleet.register_references({"r1": reference})
        gw: RunningGateway = await gateway_factory(backends=fleet.backends_setting().split(","), policy="speculative",
                                                   midstream_moves=moves, log_requests=True)
        state = gw.app[AppState.key]
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0, timeout=60)
        caplog.clear()
        caplog.set_level(logging.INFO, logger="specgate")
        try:
            raw = await client.chat.completions.with_raw_response.create(
                model="specgate-emu", messages=[{"role": "user", "content": content}], temperature=0,
                max_tokens=2000, stream=True, extra_headers={"x-request-id": "r1"})
            instance = raw.headers["x-specgate-instance"]
            text = "".join([c.choices[0].delta.content or "" async for c in raw.parse() if c.choices])
            await until(lambda: any(_event(r.getMessage()) == "request" for r in caplog.records))  # written at the end
        finally:
            await client.close()
        state.metrics.flush()
        moved = state.metrics.registry.get_sample_value("specgate_migrations_total", {"reason": "acceptance"})
        lines = [json.loads(r.getMessage()) for r in caplog.records if r.getMessage().startswith("{")]
        return text, int(moved or 0), lines, instance, state.learner.tokens_per_step("chat", "greedy")


async def test_an_answer_the_drafts_miss_moves_to_the_baseline_once_and_arrives_whole(
        gateway_factory: Callable[..., Any], caplog: pytest.LogCaptureFixture) -> None:
    reference = _unrepeated(120)
    text, moved, lines, instance, tps = await _one(gateway_factory, caplog, True, reference, "Write the list.")
    assert instance.startswith("speculative") and text == reference  # nothing lost or repeated at the seam
    assert moved == 1
    move = next(x for x in lines if x.get("event") == "midstream_move")
    assert move["to"].startswith("baseline") and move["why"].startswith("move: 1.00 tokens/step")
    access = next(x for x in lines if x.get("event") == "request")
    assert access["moved"] == "baseline" and access["moved_why"] == move["why"]
    assert access["completion_tokens"] == len(tokenize(reference)) + 1  # the parts' tokens summed (+ the end)
    # what its drafts read before it moved is acceptance evidence (regression: a moved request taught nothing, and
    # its class kept the prior, which sends the next such request to the speculative server again)
    assert tps < Settings().prior_tokens_per_step - 0.03, tps


async def test_off_or_with_drafts_accepted_the_request_stays(gateway_factory: Callable[..., Any],
                                                              caplog: pytest.LogCaptureFixture) -> None:
    reference = _unrepeated(120)
    text, moved, _, _, _ = await _one(gateway_factory, caplog, False, reference, "Write the list.")
    assert (text, moved) == (reference, 0)
    copied = DOC  # the answer repeats the prompt's document: the drafts are accepted, several tokens a step
    text, moved, lines, _, _ = await _one(gateway_factory, caplog, True, copied, f"Copy this out:\n\n{DOC}")
    assert (text, moved) == (copied, 0)
    assert not [x for x in lines if x.get("event") == "midstream_move"]
    # a watched stream's engine steps are counted as any stream's, the last step's EOS (no text) included
    # (regression: the joined stream counted chunks with text only, one step short of the relayed stream's count,
    # and the learner read its tokens per step that much higher)
    short = _unrepeated(2)  # done before the first look; its EOS comes alone, in a step of its own
    counts = []
    for moves in (True, False):
        _, _, lines, _, _ = await _one(gateway_factory, caplog, moves, short, "Write two.")
        counts.append(next(x["engine_steps"] for x in lines if x.get("event") == "request"))
    assert counts[0] == counts[1] == len(tokenize(short)) + 1, counts


async def test_a_shared_gpu_is_left_to_its_regime(gateway_factory: Callable[..., Any]) -> None:
    """On a pair sharing one GPU the regime decides which server runs (and SPECGATE_MIGRATION moves on its switches):
    mid-stream moves watch only speculative servers with a GPU of their own."""
    reference = _unrepeated(120)
    async with EmulatedPair(profile="h200-ngram", time_scale=0.25) as pair:
        pair.register_references({"r1": reference})
        gw: RunningGateway = await gateway_factory(baseline_urls=[pair.baseline_url],
                                                   speculative_urls=[pair.speculative_url], policy="speculative",
                                                   midstream_moves=True)
        state = gw.app[AppState.key]
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0, timeout=60)
        stream = await client.chat.completions.create(
            model="specgate-emu", messages=[{"role": "user", "content": "Write the list."}], temperature=0,
            max_tokens=2000, stream=True, extra_headers={"x-request-id": "r1"})
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        await client.close()
        state.metrics.flush()
        moved = state.metrics.registry.get_sample_value("specgate_migrations_total", {"reason": "acceptance"})
        assert text == reference and not moved
        assert state.proxy.migrator is not None and not any(state.proxy.migrator.live.values())
