"""Graceful shutdown of a real `python -m gateway serve` process: SIGTERM drains, then exits 0."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from gateway.bench.kit.fake_vllm import FakeBackend
from gateway.bench.kit.procs import fake_pair_gateway

CHAT = "/v1/chat/completions"
BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "stream": True}


async def open_stream(s: aiohttp.ClientSession, url: str) -> aiohttp.ClientResponse:
    r = await s.post(url + CHAT, json=BODY)
    assert r.status == 200
    first = await r.content.readuntil(b"\n\n")
    assert first.startswith(b"data: ")
    return r


async def read_rest(r: aiohttp.ClientResponse) -> tuple[bytes, bool]:
    got = b""
    try:
        async for chunk in r.content.iter_any():
            got += chunk
    except aiohttp.ClientPayloadError:
        return got, True
    return got, False


@pytest.mark.wallclock
async def test_sigterm_drains_inflight_stream_and_exits_0(fakes: tuple[FakeBackend, FakeBackend],
                                                          tmp_path: Path) -> None:
    base, spec = fakes
    base.chunks, base.chunk_delay_s = 15, 0.1  # a 1.5 s stream
    async with fake_pair_gateway(base.url, spec.url, tmp_path, SPECGATE_DRAIN_TIMEOUT_S="10") as (proc, url), \
            aiohttp.ClientSession() as s:
        stream = await open_stream(s, url)
        t_term = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        async with aiohttp.ClientSession() as probe:  # fresh connections, as a load balancer would use
            for _ in range(100):
                async with probe.get(url + "/ready") as r:
                    if r.status == 503:
                        ready = await r.json()
                        break
                await asyncio.sleep(0.02)
            assert r.status == 503 and ready["draining"] is True and ready["ready"] is False
            async with probe.post(url + CHAT, json={**BODY, "stream": False}) as r:
                assert r.status == 503
                err = (await r.json())["error"]
                assert err["code"] == "shutting_down" and err["type"] == "server_error"
            async with probe.get(url + "/metrics") as r:
                assert "specgate_draining 1.0" in await r.text()
            async with probe.get(url + "/health") as r:
                assert r.status == 200
        rest, broke = await read_rest(stream)
        assert not broke and rest.endswith(b"data: [DONE]\n\n"), rest[-200:]
        assert rest.count(b"data: ") >= 14
        code = await asyncio.wait_for(proc.wait(), 10)
        took = time.monotonic() - t_term
    assert code == 0
    assert took < 10
    assert base.completed == 1 and base.aborted == []
    assert base.calls == 1  # the refused request never reached a backend


@pytest.mark.wallclock
async def test_drain_timeout_shorter_than_stream_aborts_upstream(fakes: tuple[FakeBackend, FakeBackend],
                                                                 tmp_path: Path) -> None:
    base, spec = fakes
    base.chunks, base.chunk_delay_s = 100, 0.1  # a 10 s stream
    drain = 0.5
    async with fake_pair_gateway(base.url, spec.url, tmp_path, SPECGATE_DRAIN_TIMEOUT_S=str(drain)) as (proc, url), \
            aiohttp.ClientSession() as s:
        stream = await open_stream(s, url)
        t_term = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        rest, broke = await asyncio.wait_for(read_rest(stream), 5)
        code = await asyncio.wait_for(proc.wait(), 5)
        took = time.monotonic() - t_term
    assert code == 0
    assert b"[DONE]" not in rest
    assert broke, "the client must see the stream cut, not a clean end"
    for _ in range(50):
        if base.aborted:
            break
        await asyncio.sleep(0.02)
    assert len(base.aborted) == 1, "the upstream request was not closed"
    assert base.aborted[0][1] - t_term < drain + 1.5
    assert took < drain + 3
    assert base.completed == 0


@pytest.mark.wallclock
async def test_sigterm_idle_exits_fast(fakes: tuple[FakeBackend, FakeBackend], tmp_path: Path) -> None:
    """Nothing in flight, an idle keep-alive client connected: exit 0 at once, not after the drain timeout."""
    base, spec = fakes
    async with fake_pair_gateway(base.url, spec.url, tmp_path, SPECGATE_DRAIN_TIMEOUT_S="20") as (proc, url), \
            aiohttp.ClientSession() as s:
        async with s.post(url + CHAT, json={**BODY, "stream": False}) as r:
            assert r.status == 200
        t_term = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.wait_for(proc.wait(), 10)
        assert code == 0
        assert time.monotonic() - t_term < 3


@pytest.mark.parametrize("sig", [signal.SIGINT])
async def test_sigint_also_drains(fakes: tuple[FakeBackend, FakeBackend], tmp_path: Path, sig: int) -> None:
    base, spec = fakes
    base.chunks, base.chunk_delay_s = 5, 0.1
    async with fake_pair_gateway(base.url, spec.url, tmp_path) as (proc, url), aiohttp.ClientSession() as s:
        stream = await open_stream(s, url)
        proc.send_signal(sig)
        rest, broke = await read_rest(stream)
        assert not broke and rest.endswith(b"data: [DONE]\n\n")
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    log: Any = (tmp_path / "gateway.log").read_text().splitlines()
    events = [json.loads(line).get("event") for line in log if line.startswith("{")]
    assert "draining" in events and "stopping" in events


async def test_sigterm_with_two_workers_drains_and_exits_0(fakes: tuple[FakeBackend, FakeBackend],
                                                           tmp_path: Path) -> None:
    """SPECGATE_WORKERS=2: the parent forwards SIGTERM; each worker drains its own streams."""
    base, spec = fakes
    base.chunks, base.chunk_delay_s = 12, 0.1
    async with fake_pair_gateway(base.url, spec.url, tmp_path, SPECGATE_WORKERS="2",
                                 SPECGATE_DRAIN_TIMEOUT_S="10") as (proc, url), \
            aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True)) as s:
        streams = [await open_stream(s, url) for _ in range(4)]  # spread over both workers by the kernel
        proc.send_signal(signal.SIGTERM)
        for stream in streams:
            rest, broke = await read_rest(stream)
            assert not broke and rest.endswith(b"data: [DONE]\n\n")
        assert await asyncio.wait_for(proc.wait(), 10) == 0
    assert base.completed == 4 and base.aborted == []

