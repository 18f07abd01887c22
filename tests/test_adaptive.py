"""The adaptive policy end to end: it learns which backend is faster and follows a change."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from gateway.bench.kit.fake_vllm import FakePair
from gateway.bench.kit.inproc import GatewayFactory, RunningGateway

pytestmark = pytest.mark.asyncio

BODY = {"model": "m", "messages": [{"role": "user", "content": "Return JSON with the keys a and b."}],
        "temperature": 0, "max_tokens": 40, "stream": True}


async def send(session: aiohttp.ClientSession, url: str) -> str:
    async with session.post(url + "/v1/chat/completions", json=BODY) as r:
        await r.read()
        assert r.status == 200
        return r.headers["x-specgate-backend"]


async def paced_pair(gateway_factory: GatewayFactory, fakes: FakePair, base_pace: tuple[int, int, float],
                     spec_pace: tuple[int, int, float], **settings: Any) -> RunningGateway:
    """The fakes answer in (chunks, tokens per chunk, seconds per chunk); a seeded gateway in front."""
    for fake, (chunks, tokens, delay) in zip(fakes, (base_pace, spec_pace), strict=True):
        fake.chunks, fake.tokens_per_chunk, fake.chunk_delay_s = chunks, tokens, delay
    base, spec = fakes
    return await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], random_seed=7,
                                 forgetting=0.9, **settings)


async def test_routing_follows_an_acceptance_change(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    _, spec = fakes
    # 40 tokens: baseline 40 steps of 4 ms; speculative 10 steps of 6 ms at 4 tokens a step (≈2.7× faster).
    # No shadow lookup: the fakes' acceptance is set by hand, unrelated to their text, which the shadow reads.
    gw = await paced_pair(gateway_factory, fakes, (40, 1, 0.004), (10, 4, 0.006), explore_rate=0.1,
                          prior_step_s=0.004, prior_speculative_step_s=0.006, shadow_lookup=False)
    async with aiohttp.ClientSession() as s:
        before = [await send(s, gw.url) for _ in range(25)]
        # Acceptance collapses: one token a step, each step still 6 ms (now 1.5× slower than baseline).
        spec.chunks, spec.tokens_per_chunk = 40, 1
        after = [await send(s, gw.url) for _ in range(40)]
    assert before[-10:].count("speculative") >= 8, before
    shift = next((i for i in range(len(after)) if after[i:].count("speculative") <= 0.15 * len(after[i:])), None)
    # moved within a bounded number of requests: on a shared GPU the regime is re-judged every 8 decisions,
    # so the bound is three re-judgements
    assert shift is not None and shift <= 24, after
    assert after[-15:].count("baseline") >= 13, after


async def test_adaptive_prefers_baseline_when_speculation_is_slow(
        gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    # A draft model that costs more than it saves: 2 tokens a step at 4× the step time. (At 3×, each chunk's
    # ~1.5 ms of HTTP and event-loop time on a busy 2-core machine made it a near tie: 4.6 against 9.2 ms measured
    # per step, a mix ratio of 1.03, and a regime that may fairly go either way.)
    gw = await paced_pair(gateway_factory, fakes, (30, 1, 0.003), (15, 2, 0.012), explore_rate=0.05,
                          prior_step_s=0.003, prior_speculative_step_s=0.004)
    async with aiohttp.ClientSession() as s:
        routed = [await send(s, gw.url) for _ in range(48)]
    # the regime may try speculation first (optimism while unmeasured), and holds it at least
    # SPECGATE_REGIME_MIN_DWELL_REQUESTS (16) decisions before the measurements send it back
    assert routed[-20:].count("baseline") >= 17, routed
