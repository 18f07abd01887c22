"""Issue 35 at the gateway: backends that misbehave on the wire (raw asyncio servers), and the background
health checks and scrapes kept apart from the completion pool. The client-level cases are in
`test_upstream_conformance.py`."""

from __future__ import annotations

import asyncio
import gzip
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import orjson
import pytest

from gateway.bench.kit.fake_vllm import FakeBackend
from gateway.bench.kit.inproc import until
from gateway.core.protocol import CHAT
from gateway.state import AppState

GUARD_S = 10.0
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}
ANSWER = orjson.dumps({"id": "c", "object": "chat.completion", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "hello"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})
METRICS = b"vllm:num_requests_running 7.0\nvllm:num_requests_waiting 0.0\n"
Writer = Callable[[asyncio.StreamWriter], Awaitable[bool]]  # writes an answer; False closes the connection


def fixed(data: bytes, keep: bool = True) -> Writer:
    async def write(writer: asyncio.StreamWriter) -> bool:
        writer.write(data)
        await writer.drain()
        return keep
    return write


def ok(body: bytes, content_type: bytes = b"text/plain") -> Writer:
    return fixed(b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (content_type, len(body))
                 + body)


async def hang(writer: asyncio.StreamWriter) -> bool:
    await asyncio.sleep(3600)
    return False


class RawBackend:
    """A backend that answers `/health` 200, `/metrics` and completions with what the test gives, byte for byte;
    `hits` counts requests per path."""

    def __init__(self, post: Writer = hang, metrics: Writer | None = None) -> None:
        self.post, self.metrics = post, metrics or ok(METRICS)
        self.hits: dict[str, int] = {}
        self.server: asyncio.Server | None = None
        self.url = ""

    async def start(self) -> RawBackend:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                path = head.split(b" ", 2)[1].decode()
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length")), 0)
                await reader.readexactly(length)
                self.hits[path] = self.hits.get(path, 0) + 1
                answer = ok(b"ok") if path == "/health" else self.metrics if path == "/metrics" else self.post
                if not await answer(writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    def stop(self) -> None:
        if self.server is not None:
            self.server.close()


@pytest.fixture
async def raw() -> AsyncIterator[Callable[..., Awaitable[RawBackend]]]:
    made: list[RawBackend] = []

    async def make(**kw: Any) -> RawBackend:
        b = await RawBackend(**kw).start()
        made.append(b)
        return b

    yield make
    for b in made:
        b.stop()


async def post(url: str, stream: bool = False) -> tuple[int, dict[str, str], bytes]:
    async with aiohttp.ClientSession() as s, s.post(url + CHAT, json={**BODY, "stream": stream},
                                                    timeout=aiohttp.ClientTimeout(total=GUARD_S)) as r:
        return r.status, dict(r.headers), await r.read()


async def ejections(url: str) -> list[int]:
    async with aiohttp.ClientSession() as s, s.get(url + "/ready") as r:
        return [b["ejections"] for b in (await r.json())["backends"]]


async def test_a_101_is_an_upstream_error_that_ejects_nothing(gateway_factory: Any, raw: Any) -> None:
    """Item 14: a 101 escaped the hand-written client's parser ("Fatal error on transport"), was counted as a
    connect failure and ejected the backend. Now: a suspect protocol failure; two backends answering it mean the
    request is the cause: 502, no blame, no ejection."""
    switch = fixed(b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n\x00\x01",
                   keep=False)
    a, b = await raw(post=switch), await raw(post=switch)
    gw = await gateway_factory(baseline_urls=[a.url], speculative_urls=[b.url], policy="baseline",
                               eject_consecutive_failures=1)
    for _ in range(3):
        status, _, body = await post(gw.url)
        assert status == 502, body
        assert b"101" in body
    assert await ejections(gw.url) == [0, 0]
    assert a.hits[CHAT] == b.hits[CHAT] == 3


TRUNCATED = {
    "Chunked casing": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n"
                      b"62\r\n" + ANSWER[:98] + b"\r\n63\r\n" + ANSWER[98:140],
    "two TE headers": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n62\r\n" + ANSWER[:98] + b"\r\n",
    "short length": b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                    % len(ANSWER) + ANSWER[:98],
}


@pytest.mark.parametrize("name", list(TRUNCATED))
async def test_a_truncated_answer_fails_over_instead_of_a_short_200(gateway_factory: Any, raw: Any,
                                                                    fakes: tuple[FakeBackend, FakeBackend],
                                                                    name: str) -> None:
    """Item 7: the backend dies mid-body (no byte has reached the client of a non-streamed request): the
    attempt fails and the other backend serves the request whole."""
    cut = await raw(post=fixed(TRUNCATED[name], keep=False))
    _, spec = fakes
    gw = await gateway_factory(baseline_urls=[cut.url], speculative_urls=[spec.url], policy="baseline")
    status, headers, body = await post(gw.url)
    assert status == 200 and headers["x-specgate-instance"] == "speculative-0", body
    assert orjson.loads(body)["choices"][0]["message"]["content"]
    assert cut.hits[CHAT] == 1 and spec.calls == 1


async def test_a_truncated_stream_ends_with_an_error_not_a_clean_end(gateway_factory: Any, raw: Any) -> None:
    """Item 7, streamed: once bytes reached the client the stream cannot fail over; it must end with an error
    event, never as a complete answer."""
    event = b"data: " + orjson.dumps({"choices": [{"index": 0, "delta": {"content": "x"}}]}) + b"\n\n"
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: Chunked\r\n\r\n"

    async def cut_short(writer: asyncio.StreamWriter) -> bool:
        writer.write(head + b"%x\r\n" % len(event) + event)
        await writer.drain()
        await asyncio.sleep(0.2)  # the first event is relayed before the backend dies
        writer.write(b"40\r\ndata: {")
        await writer.drain()
        return False

    cut = await raw(post=cut_short)
    gw = await gateway_factory(baseline_urls=[cut.url], speculative_urls=[cut.url], policy="baseline",
                               max_attempts=1)
    body, ended = b"", "clean"
    async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json={**BODY, "stream": True},
                                                    timeout=aiohttp.ClientTimeout(total=GUARD_S)) as r:
        assert r.status == 200
        try:
            while chunk := await r.content.readany():
                body += chunk
        except aiohttp.ClientPayloadError:
            ended = "cut"  # the gateway closes the connection: no clean end of the chunked answer
    assert body.startswith(event) and ended == "cut"
    assert b"upstream_stream_error" in body and b"[DONE]" not in body


async def test_a_two_member_gzip_answer_is_relayed_whole(gateway_factory: Any, raw: Any) -> None:
    """Item 7: a gzip body of two members; the hand-written client relayed only the first."""
    packed = gzip.compress(ANSWER[:50]) + gzip.compress(ANSWER[50:])
    two = await raw(post=fixed(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\n"
                               b"Content-Length: %d\r\n\r\n" % len(packed) + packed))
    gw = await gateway_factory(baseline_urls=[two.url], speculative_urls=[two.url], policy="baseline")
    status, _, body = await post(gw.url)
    assert (status, body) == (200, ANSWER)


async def test_health_checks_and_new_requests_do_not_wait_behind_hung_completions(
        gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend]) -> None:
    """Item 4: every completion connection to a backend held by a hung answer. Its health checks still run (a
    503 is noticed), and a new request routed there fails over within its connect budget instead of waiting
    for a pooled connection until its first-byte timeout."""
    base, spec = fakes
    base.mode = "hang"
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               max_connections_per_backend=2, connect_timeout_s=0.3, first_byte_timeout_s=60.0,
                               eject_consecutive_failures=100)
    hung = [asyncio.create_task(post(gw.url)) for _ in range(2)]
    await until(lambda: base.calls == 2, GUARD_S)
    status, headers, _ = await post(gw.url)  # the policy sends it to the baseline, whose connections are all held
    assert status == 200 and headers["x-specgate-instance"] == "speculative-0"
    assert headers["x-specgate-reason"].startswith("failover")
    assert base.calls == 2  # it never reached the hung backend
    base.healthy = False
    pool = gw.app[AppState.key].pool
    await until(lambda: not pool.backends[0].healthy, GUARD_S)  # its health check did not queue behind the hung
    for task in hung:
        task.cancel()
    await asyncio.gather(*hung, return_exceptions=True)


async def test_a_hung_scrape_does_not_make_another_backends_load_stale(gateway_factory: Any, raw: Any) -> None:
    """Item 4: one gather scraped every backend, so one backend whose /metrics hung held every other backend's
    next scrape for the scrape timeout. Each backend has its own loop now: the healthy one is read many times
    while the hung one's first scrape is still waiting."""
    hung = await raw(metrics=hang)
    fine = await raw()
    gw = await gateway_factory(baseline_urls=[hung.url], speculative_urls=[fine.url], load_scrape_interval_s=0.02)
    await until(lambda: hung.hits.get("/metrics", 0) >= 1, GUARD_S)
    start = fine.hits.get("/metrics", 0)
    await until(lambda: fine.hits.get("/metrics", 0) >= start + 5, GUARD_S)
    assert hung.hits["/metrics"] == 1  # still the first: it has not timed out yet (2 s)
    pool = gw.app[AppState.key].pool
    assert pool.backends[1].scraped_load == 7.0 and pool.backends[0].scraped_load is None


@pytest.mark.parametrize("size", [700 << 10, 2 << 20])
async def test_a_metrics_page_over_the_cap_is_a_failed_scrape(gateway_factory: Any, raw: Any, size: int) -> None:
    """Item 11: the cap was 8 MiB, parsed on the loop; now `max_scrape_bytes` (1 MiB), and a page over it is a
    failed scrape (the load falls back to the gateway's own count). A large page under it is parsed in the
    pool's parsing thread (here 700 KiB, over `INLINE_PARSE_BYTES`) and read all the same."""
    page = METRICS + b"# padding\n" * ((size - len(METRICS)) // 10)
    big = await raw(metrics=ok(page))
    fine = await raw()
    gw = await gateway_factory(baseline_urls=[big.url], speculative_urls=[fine.url])
    pool = gw.app[AppState.key].pool
    await until(lambda: big.hits.get("/metrics", 0) >= 3 and pool.backends[1].scraped_load is not None, GUARD_S)
    expected = None if size > gw.app[AppState.key].settings.max_scrape_bytes else 7.0
    await until(lambda: pool.backends[0].scraped_load == expected, GUARD_S)
    assert pool.backends[0].scraped_load == expected


async def test_endless_headers_on_a_scrape_keep_memory_bounded(gateway_factory: Any, raw: Any) -> None:
    """Item 2 through the background scrape, with no client traffic: the hand-written client grew to 3.8 GB in
    12 s. Each scrape now stops at aiohttp's header caps."""
    async def endless(writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n")
        while True:
            writer.write(b"X-Pad: " + b"p" * 8000 + b"\r\n")
            await writer.drain()

    bad = await raw(metrics=endless)
    fine = await raw()
    tracemalloc.start()
    try:
        gw = await gateway_factory(baseline_urls=[bad.url], speculative_urls=[fine.url], load_scrape_interval_s=0.05)
        await until(lambda: bad.hits.get("/metrics", 0) >= 10, GUARD_S)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 32 << 20, f"{peak >> 20} MiB allocated"
    pool = gw.app[AppState.key].pool
    assert pool.backends[0].scraped_load is None and pool.backends[0].healthy


async def test_slow_readers_of_a_gzip_stream_keep_the_gateway_within_the_back_pressure_bound(
        gateway_factory: Any, raw: Any) -> None:
    """Item 8: clients that stop reading a gzip-encoded stream (256 MiB of events decoded, ~0.3 MB on the wire).
    The hand-written client decoded each compressed piece whole, past its 64 KiB bound: four such readers took
    the gateway to ~1 GB. Decoding now waits for the relay, which waits for the client."""
    event = b'data: {"choices":[{"index":0,"delta":{"content":"x"}}]}\n\n'
    packed = gzip.compress(event * ((256 << 20) // len(event)), compresslevel=9)
    bomb = await raw(post=fixed(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
                                b"Content-Length: %d\r\n\r\n" % len(packed) + packed))
    # the periodic health checks run throughout: under tracemalloc, on a busy 2-core machine, the decoding of four
    # bombs lags the loop past a check's timeout; such a timeout is the loop's stall, not counted (no ejection, no 502)
    gw = await gateway_factory(baseline_urls=[bomb.url], speculative_urls=[bomb.url], policy="baseline",
                               idle_timeout_s=30.0)
    host, port = gw.url.removeprefix("http://").split(":")
    body = orjson.dumps({**BODY, "stream": True})
    head = (b"POST " + CHAT.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body))
    readers = []
    tracemalloc.start()
    try:
        for _ in range(4):
            reader, writer = await asyncio.open_connection(host, int(port))
            writer.write(head + body)
            readers.append((reader, writer))
        for reader, _ in readers:  # each stream has started; then nobody reads
            assert (await asyncio.wait_for(reader.read(4096), GUARD_S)).startswith(b"HTTP/1.1 200")
        await until(lambda: bomb.hits.get(CHAT, 0) == 4, GUARD_S)
        await asyncio.sleep(1.0)  # time to decode much more, if nothing held it
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        for _, writer in readers:
            writer.transport.abort()
    assert peak < 48 << 20, f"{peak >> 20} MiB allocated for 4 stalled gzip streams"
