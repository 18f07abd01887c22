"""The completion path's HTTP/1.1 client against real loopback servers: aiohttp ones, and raw asyncio ones where
a backend must misbehave in a way aiohttp will not."""

from __future__ import annotations

import asyncio
import gzip
import ssl
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import trustme
from aiohttp import web

from gateway.bench.kit.inproc import until
from gateway.h1client import (
    ResponseTooLarge,
    UpstreamClient,
    UpstreamConnectError,
    UpstreamDisconnected,
    UpstreamProtocolError,
    origin_of,
    request_head,
)
from gateway.h1conn import HIGH_WATER

GUARD_S = 10.0
PATH = "/v1/chat/completions"
JSON = {"Content-Type": "application/json"}


def client(**kw: Any) -> UpstreamClient:
    return UpstreamClient(**{"limit_per_origin": 8, "connect_timeout_s": 2.0, "total_timeout_s": GUARD_S, **kw})


class Site:
    """An aiohttp app on a free loopback port; `peers` are the client ports of the connections it served."""

    def __init__(self) -> None:
        self.peers: list[int] = []
        self.url = ""
        self.runner: web.AppRunner | None = None


@pytest.fixture
async def site() -> AsyncIterator[Callable[[Callable[[web.Request], Awaitable[web.StreamResponse]]],
                                           Awaitable[Site]]]:
    made: list[Site] = []

    async def make(handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> Site:
        s = Site()

        async def wrapped(request: web.Request) -> web.StreamResponse:
            peer = request.transport.get_extra_info("peername") if request.transport else None
            if peer:
                s.peers.append(peer[1])
            return await handler(request)

        app = web.Application()
        app.router.add_post(PATH, wrapped)
        s.runner = web.AppRunner(app, access_log=None)
        await s.runner.setup()
        tcp = web.TCPSite(s.runner, "127.0.0.1", 0)
        await tcp.start()
        port = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        s.url = f"http://127.0.0.1:{port}"
        made.append(s)
        return s

    yield make
    for s in made:
        assert s.runner is not None
        await s.runner.cleanup()


async def raw_server(handle: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]
                     ) -> tuple[asyncio.Server, str]:
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def read_request(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                  if line.lower().startswith(b"content-length"))
    return head + await reader.readexactly(length)


async def echo(request: web.Request) -> web.Response:
    return web.json_response({"got": (await request.json()), "host": request.headers["Host"]})


async def test_a_kept_alive_connection_carries_the_next_request(site: Any) -> None:
    s = await site(echo)
    c = client()
    for i in range(3):
        r = await c.post(s.url, PATH, b'{"n": %d}' % i, JSON)
        assert r.status == 200
        assert (await r.read(1 << 20)) == b'{"got": {"n": %d}, "host": "%s"}' % (i, s.url.removeprefix("http://").encode())
        r.close()
    assert len(set(s.peers)) == 1  # one connection served all three
    assert (c.in_use(), c.idle()) == (1 - 1, 1)
    await c.close()


async def test_an_answer_closed_before_its_end_closes_the_connection() -> None:
    gone = asyncio.Event()

    async def endless(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"9\r\ndata: x\n\n\r\n")  # one event of a stream that never ends
        await writer.drain()
        if await reader.read() == b"":  # the client closed its side
            gone.set()

    server, url = await raw_server(endless)
    c = client()
    r = await c.post(url, PATH, b"{}", JSON)
    assert (await r.readany()).startswith(b"data: x")
    r.close()
    await asyncio.wait_for(gone.wait(), GUARD_S)  # the backend saw its client leave (vLLM aborts the request)
    assert (c.in_use(), c.idle()) == (0, 0)
    with pytest.raises(UpstreamDisconnected):
        await r.readany()
    server.close()
    await c.close()


async def test_a_kept_alive_connection_the_backend_dropped_is_retried_once_on_a_new_one() -> None:
    """The keep-alive race: the backend closes an idle connection as the next request goes out on it."""
    served = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        await read_request(reader)
        served += 1
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        await writer.drain()
        await read_request(reader)  # the second request on this connection: dropped unanswered
        writer.transport.abort()

    server, url = await raw_server(handle)
    c = client()
    for _ in range(2):
        r = await c.post(url, PATH, b"{}", JSON)
        assert (r.status, await r.read(100)) == (200, b"ok")
        r.close()
    assert served == 2  # the second answer came from a second connection
    server.close()
    await c.close()


async def test_a_connection_dropped_mid_answer_is_an_error_not_a_retry() -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        await writer.drain()
        writer.transport.abort()

    server, url = await raw_server(handle)
    c = client()
    r = await c.post(url, PATH, b"{}", JSON)
    with pytest.raises(UpstreamDisconnected):
        await r.read(1000)
    r.close()
    server.close()
    await c.close()


async def test_gzip_and_deflate_answers_are_decoded(site: Any) -> None:
    payload = b'{"choices": []}' * 50

    async def compressed(request: web.Request) -> web.Response:
        encoding = request.query.get("e", "gzip")
        body = gzip.compress(payload) if encoding == "gzip" else zlib.compress(payload)
        return web.Response(body=body, headers={"Content-Encoding": encoding, **JSON})

    s = await site(compressed)
    c = client()
    for encoding in ("gzip", "deflate"):
        r = await c.post(s.url, PATH + f"?e={encoding}", b"{}", JSON)
        assert await r.read(1 << 20) == payload
        r.close()
    await c.close()


async def test_an_unknown_encoding_or_a_garbled_answer_is_a_protocol_error() -> None:
    answers = [b"HTTP/1.1 200 OK\r\nContent-Encoding: zstd\r\nContent-Length: 2\r\n\r\nzz",
               b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n",
               b"NOT HTTP AT ALL\r\n\r\n"]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(answers.pop(0))
        await writer.drain()

    server, url = await raw_server(handle)
    c = client()
    for _ in range(3):
        with pytest.raises(UpstreamProtocolError):
            r = await c.post(url, PATH, b"{}", JSON)
            await r.read(100)
    assert c.in_use() == 0
    server.close()
    await c.close()


async def test_a_reader_that_lags_pauses_the_socket_and_loses_nothing(site: Any) -> None:
    piece = b"x" * 4096
    count = 64  # 256 KiB, four times the high-water mark

    async def fast(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)
        for _ in range(count):
            await resp.write(piece)
        await resp.write_eof()
        return resp

    s = await site(fast)
    c = client()
    r = await c.post(s.url, PATH, b"{}", JSON)
    conn = r._conn
    assert conn is not None
    await until(lambda: conn.paused, GUARD_S)
    assert r._buffered <= HIGH_WATER + 2 * len(piece) + 65536  # bounded by the mark and one socket read
    got = await r.read(1 << 20)
    assert got == piece * count
    r.close()
    assert c.idle() == 1  # read to its end: the connection is kept
    await c.close()


async def test_the_total_timeout_ends_an_answer_that_never_comes() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await reader.read()  # no answer, until the client gives up and closes

    server, url = await raw_server(silent)
    c = client(total_timeout_s=0.2)
    with pytest.raises(TimeoutError):
        await c.post(url, PATH, b"{}", JSON)
    assert (c.in_use(), c.idle()) == (0, 0)
    server.close()
    await c.close()


async def test_at_the_limit_a_request_waits_for_a_connection_instead_of_opening_one(site: Any) -> None:
    open_now = peak = 0
    release = asyncio.Event()

    async def slow(request: web.Request) -> web.Response:
        nonlocal open_now, peak
        open_now += 1
        peak = max(peak, open_now)
        await release.wait()
        open_now -= 1
        return web.Response(body=b"ok")

    s = await site(slow)
    c = client(limit_per_origin=1)

    async def one() -> bytes:
        r = await c.post(s.url, PATH, b"{}", JSON)
        try:
            return await r.read(100)
        finally:
            r.close()

    tasks = [asyncio.create_task(one()) for _ in range(3)]
    await until(lambda: open_now == 1 and c.waiting() == 2, GUARD_S)  # one at the backend, two queued
    release.set()
    assert await asyncio.wait_for(asyncio.gather(*tasks), GUARD_S) == [b"ok"] * 3
    assert peak == 1 and len(set(s.peers)) == 1
    await c.close()


async def test_too_large_answers_stop_at_the_limit(site: Any) -> None:
    async def big(request: web.Request) -> web.Response:
        return web.Response(body=b"y" * 5000)

    s = await site(big)
    c = client()
    r = await c.post(s.url, PATH, b"{}", JSON)
    with pytest.raises(ResponseTooLarge):
        await r.read(1000)
    r.close()
    await c.close()


async def test_a_refused_connection_is_a_connect_error() -> None:
    async def close_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server, url = await raw_server(close_at_once)
    server.close()
    await server.wait_closed()
    c = client()
    with pytest.raises(UpstreamConnectError):
        await c.post(url, PATH, b"{}", JSON)
    await c.close()


def test_a_header_with_a_line_break_is_refused_and_the_head_is_exact() -> None:
    origin = origin_of("http://user@vllm.internal:8000/prefix/")
    assert request_head(origin, PATH, 2, {"A": "b"}) == (
        b"POST /prefix/v1/chat/completions HTTP/1.1\r\nHost: vllm.internal:8000\r\nContent-Length: 2\r\nA: b\r\n\r\n")
    assert origin_of("https://[::1]/").host_header == "[::1]"
    for bad in ({"A": "b\r\nX-Injected: 1"}, {"A\nB": "c"}, {"A": "b\rc"}):
        with pytest.raises(ValueError):
            request_head(origin, PATH, 2, bad)


def _past(deadline: float) -> Callable[[], bool]:
    return lambda: time.monotonic() > deadline


async def test_a_connection_idle_past_the_keepalive_is_closed_not_reused(site: Any) -> None:
    s = await site(echo)
    c = client(keepalive_s=0.05)
    for _ in range(2):
        r = await c.post(s.url, PATH, b"{}", JSON)
        await r.read(1000)
        r.close()
        await until(_past(time.monotonic() + c.keepalive_s), GUARD_S)  # idle past the keep-alive
    assert len(set(s.peers)) == 2  # the first connection had gone stale: a new one served the second request
    assert c.idle() == 1
    await c.close()


async def test_a_get_carries_no_body_and_reads_the_answer() -> None:
    heads: list[bytes] = []

    async def metrics_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 28\r\n\r\nvllm:num_requests_running 3\n")
        await writer.drain()

    server, url = await raw_server(metrics_once)
    c = client()
    r = await c.request("GET", url, "/metrics", b"", {"Authorization": "Bearer k"}, timeout_s=1.0)
    assert (r.status, await r.read(1000)) == (200, b"vllm:num_requests_running 3\n")
    r.close()
    assert heads[0].startswith(b"GET /metrics HTTP/1.1\r\n") and b"content-length" not in heads[0].lower()
    assert b"Authorization: Bearer k\r\n" in heads[0]
    server.close()
    await c.close()


async def test_an_https_backend_is_reached_over_tls_with_its_name_checked() -> None:
    """A backend URL with https: TLS with the host name verified (here against a throwaway CA)."""
    ca = trustme.CA()
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_ctx)
    client_ctx = ssl.create_default_context()
    ca.configure_trust(client_ctx)

    async def echo_tls(request: web.Request) -> web.Response:
        return web.json_response({"host": request.headers["Host"], "secure": request.secure})

    app = web.Application()
    app.router.add_post(PATH, echo_tls)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "localhost", 0, ssl_context=server_ctx)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        c = client(ssl_context=client_ctx)
        r = await c.post(f"https://localhost:{port}", PATH, b"{}", JSON)
        assert await r.read(1000) == b'{"host": "localhost:%d", "secure": true}' % port
        r.close()
        untrusted = client()  # the system's CAs do not know the throwaway one
        with pytest.raises(UpstreamConnectError):
            await untrusted.post(f"https://localhost:{port}", PATH, b"{}", JSON)
        await c.close()
        await untrusted.close()
    finally:
        await runner.cleanup()
