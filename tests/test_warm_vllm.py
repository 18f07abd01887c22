"""deploy/warm_vllm.py: the sampled warm-up a fresh vLLM server gets before traffic (its plan, pure; its bursts,
against the emulator's real loopback servers; the launcher's switch)."""

from __future__ import annotations

import asyncio
import io
import socket

import pytest
from test_deploy import load_script

from gateway.emulator import EmulatedPair

warmer = load_script("warm_vllm")
lp = load_script("launch_pair")


@pytest.mark.parametrize(("limit", "levels"), [(64, [1, 2, 4, 8, 16, 32, 64]), (48, [1, 2, 4, 8, 16, 32, 48]),
                                               (1, [1]), (3, [1, 2, 3])])
def test_concurrencies_double_up_to_the_limit(limit: int, levels: list[int]) -> None:
    assert warmer.concurrencies(limit) == levels


def test_plan_covers_every_sampling_shape_at_every_concurrency() -> None:
    bursts = warmer.plan("m", max_concurrency=8, max_tokens=5)
    assert {(b.shape, b.concurrency) for b in bursts} == {(s, c) for s in warmer.SHAPES for c in (1, 2, 4, 8)}
    assert all(len(b.bodies) == b.concurrency for b in bursts)
    bodies = [body for b in bursts for body in b.bodies]
    assert len({body["prompt"] for body in bodies}) == len(bodies)  # no prompt is another's cached prefix
    assert all(body["max_tokens"] == 5 and body["model"] == "m" and body["ignore_eos"] for body in bodies)
    top_k = next(b for b in bursts if b.shape == "top_k+top_p")
    assert all(body["top_k"] == 40 and body["top_p"] == 0.95 for body in top_k.bodies)
    mixed = next(b for b in bursts if b.shape == "mixed" and b.concurrency == 8)  # greedy and top-p in one batch
    assert {body["temperature"] for body in mixed.bodies} == {0.0, 0.8}
    assert sum("top_p" in body for body in mixed.bodies) == 4


async def test_every_burst_reaches_the_server_and_is_answered() -> None:
    async with EmulatedPair(time_scale=0.05) as pair:
        model = await asyncio.to_thread(warmer.served_model, pair.speculative_url)
        assert model == "specgate-emu"
        bursts = warmer.plan(model, max_concurrency=4, max_tokens=3)
        out = io.StringIO()
        ok, failed = await asyncio.to_thread(warmer.warm, pair.speculative_url, bursts, 30.0, out)
        sent = sum(len(b.bodies) for b in bursts)
        assert (ok, failed) == (sent, 0)
        assert pair.speculative.stats.requests == sent and pair.baseline.stats.requests == 0
        assert pair.speculative.stats.generation_tokens >= 3 * sent  # ignore_eos: every request made its tokens
        assert len(out.getvalue().splitlines()) == len(bursts)


def test_an_unreachable_server_fails_the_warm_up_without_raising(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}"
    ok, failed = warmer.warm(url, warmer.plan("m", max_concurrency=2, max_tokens=1), 2.0, io.StringIO())
    assert ok == 0 and failed == 2 * len(warmer.SHAPES) * 2 - len(warmer.SHAPES)  # 1 + 2 requests a shape
    assert warmer.main([url]) == 1
    assert "cannot read /v1/models" in capsys.readouterr().err
    assert lp.warm_up([url]) is False


def test_the_launcher_warms_up_unless_told_not_to() -> None:
    assert lp.parse_args(["--target", "t", "--ngram"]).warm_up is True
    assert lp.parse_args(["--target", "t", "--ngram", "--no-warm-up"]).warm_up is False
