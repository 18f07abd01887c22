"""The emulator's one-GPU features: vLLM's dynamic speculative decoding (a profile option), the fixed-γ padding of
decode steps, and what random weights generate greedily (dummy mode)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from gateway.emulator import PROFILES, EmulatedPair
from gateway.emulator.costs import SeqWork, pad_to_gamma
from gateway.emulator.target import dummy_output

FAST = 0.05


@pytest.mark.parametrize(("batch", "gamma"), [(1, 3), (16, 3), (17, 3), (31, 3), (32, 2), (128, 2), (256, 2)])
def test_gamma_schedule_follows_vllms_dense_lookup(batch: int, gamma: int) -> None:
    """Gaps between ranges and the tail past the last range carry the previous γ (vLLM's
    build_dynamic_sd_schedule_lookup); the profile's γ caps every entry."""
    prof = PROFILES["h200-ngram"].with_overrides(spec_schedule=((1, 16, 3), (32, 128, 2)))
    assert prof.gamma_at(batch) == gamma
    capped = prof.with_overrides(spec_schedule=((1, 8, 9),), gamma=4)
    assert capped.gamma_at(1) == 4
    assert PROFILES["h200-ngram"].gamma_at(200) == 4  # no schedule: γ always


def test_dynk_profile_stops_drafting_above_16_running_requests() -> None:
    prof = PROFILES["h200-ngram-dynk"]
    assert [prof.gamma_at(b) for b in (1, 4, 5, 16, 17, 48)] == [4, 4, 2, 2, 0, 0]


def test_fixed_gamma_pads_undrafted_decodes_only() -> None:
    verify = [SeqWork(1, 100), SeqWork(3, 200), SeqWork(5, 300)]
    assert pad_to_gamma(verify, 4) == [SeqWork(5, 100), SeqWork(3, 200), SeqWork(5, 300)]


def test_dummy_greedy_output_is_one_token_then_a_two_token_cycle() -> None:
    """As vLLM 0.26 generated from random weights on the H200 for prompts of 8 to 3,000 words."""
    for seed in range(5):
        toks = dummy_output(64, 0.0, seed).tokens
        assert len(toks) == 64
        assert toks[1] != toks[2] and all(toks[i] == toks[i + 2] for i in range(1, 62))
        sampled = dummy_output(64, 0.7, seed).tokens
        assert len(set(sampled)) > 60


async def _tokens_per_step(s: aiohttp.ClientSession, url: str, temperature: float, n: int) -> list[float]:
    body = {"model": "specgate-emu", "prompt": "Summarise the meeting notes of Tuesday.", "max_tokens": 96,
            "temperature": temperature, "stream": True,
            "stream_options": {"include_usage": True, "continuous_usage_stats": True}}

    async def one() -> float:
        steps, tokens = 0, 0
        async with s.post(url + "/v1/completions", json=body) as r:
            assert r.status == 200
            async for line in r.content:
                if line.startswith(b"data: {"):
                    event: dict[str, Any] = json.loads(line[6:])
                    if event.get("choices") and event["choices"][0].get("text"):
                        steps += 1
                    if event.get("usage"):
                        tokens = event["usage"]["completion_tokens"]
        return tokens / max(steps, 1)

    return list(await asyncio.gather(*(one() for _ in range(n))))


async def test_dynamic_k_server_drafts_alone_and_not_in_a_big_batch() -> None:
    """The dynk profile's speculative server: greedy requests draft at batch 1 (~synthetic tokens per step),
    none at batch 24 (γ = 0 above 16 running requests), while the fixed-γ server still drafts at 24."""
    kw: dict[str, Any] = {"time_scale": FAST, "synthetic_acceptance_length": 3.3, "load_format": "dummy"}
    async with EmulatedPair(profile="h200-ngram-dynk", **kw) as dyn, aiohttp.ClientSession() as s:
        alone = await _tokens_per_step(s, dyn.speculative_url, 0.0, 1)
        crowded = await _tokens_per_step(s, dyn.speculative_url, 0.0, 24)
    async with EmulatedPair(profile="h200-ngram", **kw) as fixed, aiohttp.ClientSession() as s:
        fixed_crowded = await _tokens_per_step(s, fixed.speculative_url, 0.0, 24)
    assert alone[0] > 2.5, alone
    assert max(crowded) < 1.1, crowded
    assert min(fixed_crowded) > 2.5, fixed_crowded


async def test_undrafted_sampled_requests_cost_a_fixed_gamma_server_more_gpu_time() -> None:
    """64 sampled requests (random weights: n-gram finds nothing): the fixed-γ server verifies 1 + γ padded
    tokens per sequence per decode step, the dynamic one (γ = 0 at that batch) one token."""
    busy: dict[str, float] = {}
    for name in ("h200-ngram", "h200-ngram-dynk"):
        async with EmulatedPair(profile=name, time_scale=FAST, synthetic_acceptance_length=3.3,
                                load_format="dummy") as pair, aiohttp.ClientSession() as s:
            await _tokens_per_step(s, pair.speculative_url, 0.8, 64)
            busy[name] = pair.gpu.busy_s["speculative"]
    assert busy["h200-ngram"] > 1.4 * busy["h200-ngram-dynk"], busy
