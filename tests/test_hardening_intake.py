"""Issue 35, item 12: the parse helpers' queues are bounded (503 beyond, OpenAI-shaped), and a legitimate medium
request is not parsed behind several huge bodies."""

from __future__ import annotations

import asyncio

import aiohttp
import orjson
import pytest

from gateway.bench.kit.fake_vllm import FakePair
from gateway.bench.kit.inproc import fast_settings, start_gateway, until
from gateway.state import AppState

pytestmark = pytest.mark.asyncio
CHAT = "/v1/chat/completions"


def empties(size: int) -> bytes:
    """A body of about `size` bytes that is slow to parse for its size: `{}` messages (forwarded as they are)."""
    return b'{"model":"m","messages":[' + b",".join([b"{}"] * (size // 3)) + b"]}"


def medium(size: int) -> bytes:
    """A legitimate request of about `size` bytes."""
    return orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "word " * (size // 5)}]})


async def post(session: aiohttp.ClientSession, url: str, body: bytes) -> tuple[int, bytes]:
    async with session.post(url + CHAT, data=body, headers={"Content-Type": "application/json"}) as r:
        return r.status, await r.read()


async def test_bodies_beyond_the_parse_queue_are_shed_with_an_openai_shaped_503(fakes: FakePair) -> None:
    base, spec = fakes
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url],
                                           offload_parse_bytes=1024, offload_large_parse_bytes=64 * 1024,
                                           parse_queue_bytes=2 * 1024 * 1024))
    try:
        async with aiohttp.ClientSession() as s:
            answers = await asyncio.gather(*(post(s, gw.url, empties(900_000)) for _ in range(8)))
            statuses = [status for status, _ in answers]
            shed = [orjson.loads(body) for status, body in answers if status == 503]
            assert shed and statuses.count(200) >= 1, statuses  # at least one parsed, the rest beyond the bound shed
            error = shed[0]["error"]
            assert isinstance(error, dict) and error["code"] == "parse_queue_full" and error["type"] == "server_error"
            status, _ = await post(s, gw.url, medium(100_000))  # once the queue drained, admitted again
            assert status == 200
    finally:
        await gw.runner.cleanup()


async def test_a_medium_request_is_not_parsed_behind_huge_ones(fakes: FakePair) -> None:
    """A 300 KB request took 3.6 s while four 8 MiB `{}`-heavy bodies were parsed (one helper, one queue)."""
    base, spec = fakes
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url],
                                           offload_parse_bytes=16 * 1024, offload_large_parse_bytes=512 * 1024))
    try:
        async with aiohttp.ClientSession() as s:
            await asyncio.gather(post(s, gw.url, medium(100_000)), post(s, gw.url, empties(600_000)))  # helpers up
            order: list[str] = []

            async def timed(name: str, body: bytes) -> int:
                status, _ = await post(s, gw.url, body)
                order.append(name)
                return status

            huge = [asyncio.create_task(timed("huge", empties(2 << 20))) for _ in range(3)]
            large = gw.app[AppState.key].proxy.intake.large
            await until(lambda: large.queued >= 1)  # the huge ones are in first
            assert await timed("medium", medium(300_000)) == 200
            assert 503 not in await asyncio.gather(*huge)  # the fake backend refuses them (over its 1 MiB): 413
        assert order.index("medium") < 2, order  # not behind all of them (with one queue it was last)
    finally:
        await gw.runner.cleanup()
