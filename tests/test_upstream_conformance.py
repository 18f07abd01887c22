"""Upstream conformance: the completion path's client (aiohttp's `ClientSession`, configured by
`gateway.upstream`) against real loopback servers: aiohttp ones, and raw asyncio ones where a backend must misbehave
in a way aiohttp will not. These cases were the hand-written client's tests (issue 35 retired it); each names the
semantics the gateway relies on, and the issue's items they guard."""

from __future__ import annotations

import asyncio
import gzip
import ssl
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
import trustme
from aiohttp import web

from gateway.bench.kit.inproc import until
from gateway.upstream import (
    CLIENT_ERRORS,
    READ_BUFSIZE,
    ResponseTooLarge,
    UnrelayableAnswer,
    UpstreamClient,
    map_client_error,
    read_capped,
)

GUARD_S = 10.0
PATH = "/v1/chat/completions"
JSON = {"Content-Type": "application/json"}


def client(**kw: Any) -> UpstreamClient:
    return UpstreamClient(**{"limit_per_origin": 8, "connect_timeout_s": 2.0, "total_timeout_s": GUARD_S, **kw})


async def failure(attempt: Awaitable[Any]) -> str:
    """The proxy's failover reason for an exchange that must fail (`map_client_error`)."""
    try:
        await attempt
    except (*CLIENT_ERRORS, TimeoutError) as exc:
        return map_client_error(exc).reason
    raise AssertionError("the exchange did not fail")


async def post_read(c: UpstreamClient, url: str, limit: int = 1 << 20) -> bytes:
    r = await c.post(url, PATH, b"{}", JSON)
    try:
        return await read_capped(r, limit)
    finally:
        r.close()


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
        assert (await read_capped(r, 1 << 20)) == b'{"got": {"n": %d}, "host": "%s"}' % (
            i, s.url.removeprefix("http://").encode())
        r.close()
    assert len(set(s.peers)) == 1  # one connection served all three
    assert (c.in_use(), c.idle()) == (0, 1)
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
    assert (await r.content.readany()).startswith(b"data: x")
    r.close()
    await asyncio.wait_for(gone.wait(), GUARD_S)  # the backend saw its client leave (vLLM aborts the request)
    assert (c.in_use(), c.idle()) == (0, 0)
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
        writer.close()

    server, url = await raw_server(handle)
    c = client()
    for _ in range(2):
        assert await post_read(c, url, 100) == b"ok"
    assert served == 2  # the second answer came from a second connection
    server.close()
    await c.close()


async def test_a_fresh_connection_dropped_before_any_answer_is_not_retried() -> None:
    """Only a pooled connection can lose the keep-alive race; a new one dropped unanswered is the backend's
    failure (the proxy fails over), not a reason to send the request to it again."""
    served = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        await read_request(reader)
        served += 1
        writer.close()

    server, url = await raw_server(handle)
    c = client()
    assert await failure(post_read(c, url, 100)) == "connect"
    assert served == 1
    server.close()
    await c.close()


async def test_a_connection_dropped_mid_answer_is_an_error_not_a_retry() -> None:
    served = 0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal served
        served += 1
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
        await writer.drain()
        writer.transport.abort()

    server, url = await raw_server(handle)
    c = client()
    assert await failure(post_read(c, url, 1000)) in ("connect", "protocol")
    assert served == 1
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
        assert await read_capped(r, 1 << 20) == payload
        r.close()
    await c.close()


ANSWERS = {
    "unknown encoding": b"HTTP/1.1 200 OK\r\nContent-Encoding: compress\r\nContent-Length: 2\r\n\r\nzz",
    "bad length": b"HTTP/1.1 200 OK\r\nContent-Length: nope\r\n\r\n",
    "not http": b"NOT HTTP AT ALL\r\n\r\n",
    "length and chunked": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n"
                          b"2\r\nok\r\n0\r\n\r\n",
    "bad chunk size": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nok\r\n0\r\n\r\n",
    "garbled gzip": b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope",
    # issue 35 item 14: a 101 nobody asked for
    "switching protocols": b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n",
}


@pytest.mark.parametrize("name", list(ANSWERS))
async def test_an_answer_the_gateway_cannot_relay_is_a_protocol_error(name: str) -> None:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(ANSWERS[name])
        await writer.drain()
        await reader.read()

    server, url = await raw_server(handle)
    c = client()
    assert await failure(post_read(c, url, 100)) == "protocol"
    await until(lambda: c.in_use() == 0, GUARD_S)  # not leaked (one whose answer ended cleanly may be pooled)
    server.close()
    await c.close()


async def test_a_101_closes_its_connection_and_is_not_the_backends_death() -> None:
    """Issue 35 item 14: a 101 on a POST is an upstream error the proxy fails over on, suspect (blamed only if
    another backend serves the request), not a connect failure that ejects."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(ANSWERS["switching protocols"] + b"\x00\x01binary after the switch")
        await writer.drain()
        await reader.read()

    server, url = await raw_server(handle)
    c = client()
    with pytest.raises(UnrelayableAnswer) as caught:
        await c.post(url, PATH, b"{}", JSON)
    mapped = map_client_error(caught.value)
    assert (mapped.reason, mapped.suspect) == ("protocol", True)
    await until(lambda: c.in_use() == 0, GUARD_S)
    assert c.idle() == 0  # a switched connection is never pooled
    server.close()
    await c.close()


async def test_a_reader_that_lags_pauses_the_socket_and_loses_nothing(site: Any) -> None:
    piece = b"x" * 4096
    count = 256  # 1 MiB, eight times the reader's bound
    written = 0

    async def fast(request: web.Request) -> web.StreamResponse:
        nonlocal written
        resp = web.StreamResponse()
        await resp.prepare(request)
        for _ in range(count):
            await resp.write(piece)
            written += len(piece)
        await resp.write_eof()
        return resp

    s = await site(fast)
    c = client()
    r = await c.post(s.url, PATH, b"{}", JSON)
    await until(lambda: r.content.total_bytes >= 2 * READ_BUFSIZE, GUARD_S)
    await asyncio.sleep(0.2)  # time to read more, if reading did not pause
    assert r.content.total_bytes <= 2 * READ_BUFSIZE + 4 * len(piece) + (1 << 16)  # the bound and one socket read
    got = await read_capped(r, 1 << 21)
    assert got == piece * count
    r.close()
    assert c.idle() == 1  # read to its end: the connection is kept
    await c.close()


async def test_a_slow_reader_of_a_gzip_stream_holds_decompression_too() -> None:
    """Issue 35 item 8: a small gzip answer of 256 MiB decoded, not read: what waits decoded stays near the
    reader's bound (the hand-written client decoded each compressed piece whole)."""
    decoded = 256 << 20
    body = gzip.compress(b"\0" * decoded, compresslevel=9)

    async def bomb(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await writer.drain()
        await reader.read()

    server, url = await raw_server(bomb)
    c = client()
    r = await c.post(url, PATH, b"{}", JSON)
    first = await r.content.readany()
    assert first and set(first) == {0}
    await asyncio.sleep(0.2)  # time to decode more, if decoding did not pause with reading
    assert r.content.total_bytes <= 8 * READ_BUFSIZE  # decoded so far: bounded, not 256 MiB
    r.close()
    server.close()
    await c.close()


async def test_the_total_timeout_ends_an_answer_that_never_comes() -> None:
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        await reader.read()  # no answer, until the client gives up and closes

    server, url = await raw_server(silent)
    c = client(total_timeout_s=0.2)
    assert await failure(c.post(url, PATH, b"{}", JSON)) == "timeout"
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
    c = client(limit_per_origin=1, connect_timeout_s=GUARD_S)
    tasks = [asyncio.create_task(post_read(c, s.url, 100)) for _ in range(3)]
    await until(lambda: open_now == 1, GUARD_S)
    await asyncio.sleep(0.05)
    release.set()
    assert await asyncio.wait_for(asyncio.gather(*tasks), GUARD_S) == [b"ok"] * 3
    assert peak == 1 and len(set(s.peers)) == 1
    await c.close()


async def test_at_the_limit_a_wait_past_the_connect_budget_fails_as_a_connect_failure(site: Any) -> None:
    """Issue 35 item 4: every connection held by answers that hang; the next request waits at most its connect
    budget, then fails as `connect` (the proxy fails over), instead of queueing until a hung answer ends."""
    release = asyncio.Event()

    async def hung(request: web.Request) -> web.Response:
        await release.wait()
        return web.Response(body=b"ok")

    s = await site(hung)
    c = client(limit_per_origin=2, connect_timeout_s=0.3)
    held = [asyncio.create_task(post_read(c, s.url, 100)) for _ in range(2)]
    await until(lambda: len(s.peers) == 2, GUARD_S)
    assert await failure(c.post(s.url, PATH, b"{}", JSON)) == "connect"
    release.set()
    assert await asyncio.gather(*held) == [b"ok", b"ok"]
    await c.close()


async def test_a_waiter_cancelled_as_it_is_woken_passes_the_connection_on(site: Any) -> None:
    """Issue 35 item 13: at the limit, the waiter woken by a returned connection is cancelled in the same
    iteration; the next waiter must get the connection (the hand-written pool lost that wake-up, and the next
    waited with an idle connection in the pool)."""
    gate = asyncio.Event()

    async def gated(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse()
        await resp.prepare(request)  # the head goes out at once; the held answer's body waits for the gate
        if request.query.get("hold"):
            await gate.wait()
        await resp.write(b"ok")
        await resp.write_eof()
        return resp

    s = await site(gated)
    c = client(limit_per_origin=1, connect_timeout_s=GUARD_S)
    first = await c.post(s.url, PATH + "?hold=1", b"{}", JSON)
    woken = asyncio.create_task(post_read(c, s.url, 100))
    nxt = asyncio.create_task(post_read(c, s.url, 100))
    await asyncio.sleep(0.05)  # both wait for the one connection
    assert not woken.done() and not nxt.done()
    gate.set()
    assert await read_capped(first, 100) == b"ok"  # the connection goes back to the pool: a waiter is woken ...
    woken.cancel()  # ... and cancelled in the same iteration
    assert await asyncio.wait_for(nxt, GUARD_S / 2) == b"ok"  # far inside its connect budget (GUARD_S)
    first.close()
    await c.close()


async def test_too_large_answers_stop_at_the_limit(site: Any) -> None:
    async def big(request: web.Request) -> web.Response:
        return web.Response(body=b"y" * 5000)

    s = await site(big)
    c = client()
    with pytest.raises(ResponseTooLarge):
        await post_read(c, s.url, 1000)
    await c.close()


async def test_a_refused_connection_is_a_connect_error() -> None:
    async def close_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server, url = await raw_server(close_at_once)
    server.close()
    await server.wait_closed()
    c = client()
    assert await failure(c.post(url, PATH, b"{}", JSON)) == "connect"
    await c.close()


async def test_a_header_with_a_line_break_is_refused(site: Any) -> None:
    s = await site(echo)
    c = client()
    for bad in ({"A": "b\r\nX-Injected: 1"}, {"A": "b\rc"}, {"A": "b\nc"}):
        with pytest.raises(ValueError):
            await c.post(s.url, PATH, b"{}", bad)
    assert await post_read(c, s.url.rstrip("/") + "/") == b'{"got": {}, "host": "%s"}' % (
        s.url.removeprefix("http://").encode())  # a trailing slash on the base URL is not doubled
    await c.close()


def _past(deadline: float) -> Callable[[], bool]:
    return lambda: time.monotonic() > deadline


async def test_a_connection_idle_past_the_keepalive_is_closed_not_reused(site: Any) -> None:
    s = await site(echo)
    c = client(keepalive_s=0.05)
    for _ in range(2):
        await post_read(c, s.url)
        await until(_past(time.monotonic() + 0.1), GUARD_S)  # idle past the keep-alive
    assert len(set(s.peers)) == 2  # the first connection had gone stale: a new one served the second request
    await c.close()


async def test_a_get_carries_no_body_and_reads_the_answer() -> None:
    heads: list[bytes] = []

    async def metrics_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 28\r\n\r\nvllm:num_requests_running 3\n")
        await writer.drain()

    server, url = await raw_server(metrics_once)
    c = client()
    r = await c.request("GET", url, "/metrics", None, {"Authorization": "Bearer k"})
    assert (r.status, await read_capped(r, 1000)) == (200, b"vllm:num_requests_running 3\n")
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
        assert await post_read(c, f"https://localhost:{port}") == b'{"host": "localhost:%d", "secure": true}' % port
        untrusted = client()  # the system's CAs do not know the throwaway one
        assert await failure(untrusted.post(f"https://localhost:{port}", PATH, b"{}", JSON)) == "connect"
        await c.close()
        await untrusted.close()
    finally:
        await runner.cleanup()


# --------------------------------------------------------------------------- issue 35: a hostile upstream

async def _endless(writer: asyncio.StreamWriter, piece: bytes, sent: list[int]) -> None:
    """Write `piece` until the client goes away; `sent[0]` counts the bytes written."""
    try:
        while True:
            writer.write(piece)
            await writer.drain()
            sent[0] += len(piece)
    except (ConnectionError, OSError):
        pass


@pytest.mark.parametrize("kind", ["endless headers", "endless header value"])
async def test_endless_headers_are_refused_with_bounded_memory(kind: str) -> None:
    """Issue 35 item 2: an upstream that never ends its header block (8 KiB headers, or one value that never
    ends) is a protocol error once past aiohttp's caps (128 lines of 8 KiB); the gateway's memory stays bounded
    (the hand-written client grew to 2.8 GB in 5 s) and it closes the connection."""
    sent = [0]

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\n" + (b"X-Long: " if kind == "endless header value" else b""))
        if kind == "endless headers":
            await _endless(writer, b"X-Pad: " + b"p" * 8000 + b"\r\n", sent)
        else:
            await _endless(writer, b"v" * 8192, sent)

    server, url = await raw_server(handle)
    c = client()
    tracemalloc.start()
    try:
        assert await failure(c.post(url, PATH, b"{}", JSON)) == "protocol"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{peak >> 20} MiB allocated while refusing the headers"
    await until(lambda: c.in_use() == 0, GUARD_S)
    assert sent[0] < 64 << 20  # the backend could send no more than socket buffers once the client gave up
    server.close()
    await c.close()


@pytest.mark.parametrize("when", ["same packet", "while idle"])
async def test_leftover_bytes_after_a_complete_answer_never_reach_the_next_one(when: str) -> None:
    """Issue 35 item 6: a second answer after a complete one, in the same packet or arriving while the
    connection is idle in the pool; the next request's answer must be the backend's own, not the leftovers."""
    conns = 0
    smuggled = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nX-Smuggled: 1\r\n\r\nevil"
    idle_sent = asyncio.Event()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal conns
        first = True
        while True:
            try:
                request = await read_request(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            # a connection counts when it carries this test's request: in the full suite another test's leftover
            # client once reached this port (the OS reuses ports) and counted 4
            conns += first and request.startswith(b"POST " + PATH.encode())
            first = False
            answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
            writer.write(answer + smuggled if when == "same packet" else answer)
            await writer.drain()
            if when == "while idle":
                await asyncio.sleep(0.05)
                writer.write(smuggled)
                await writer.drain()
                idle_sent.set()

    server, url = await raw_server(handle)
    c = client()
    for _ in range(2):
        r = await c.post(url, PATH, b"{}", JSON)
        assert "X-Smuggled" not in r.headers and r.status == 200
        assert await read_capped(r, 100) == b"ok"
        r.close()
        if when == "while idle":
            await asyncio.wait_for(idle_sent.wait(), GUARD_S)
            idle_sent.clear()
            await asyncio.sleep(0.05)  # the bytes reach the pooled connection
    assert conns == 2  # the dirty connection was closed, not reused
    server.close()
    await c.close()


TRUNCATED = {
    "Chunked casing": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\n\r\n10\r\n0123456789abcdef\r\n8\r\n0123",
    "two TE headers": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n"
                      b"10\r\n0123456789abcdef\r\n8\r\n0123",
    "short length": b"HTTP/1.1 200 OK\r\nContent-Length: 197\r\n\r\n" + b"x" * 98,
}


@pytest.mark.parametrize("name", list(TRUNCATED))
async def test_a_truncated_body_is_an_error_not_a_complete_answer(name: str) -> None:
    """Issue 35 item 7: the backend dies mid-body; reading the answer must fail, never end as if complete."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(TRUNCATED[name])
        await writer.drain()
        writer.close()

    server, url = await raw_server(handle)
    c = client()
    assert await failure(post_read(c, url, 1000)) in ("connect", "protocol")
    server.close()
    await c.close()


async def test_a_chunk_without_its_crlf_fails_the_reader_at_once() -> None:
    """Issue 35 item 7, found here: a chunk not followed by CRLF, the rest later. aiohttp's C parser put the
    error on the connection only, and the reader waited for the total timeout with the socket closed."""
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
                     b"9\r\ndata: x\n\n")
        await writer.drain()
        await asyncio.sleep(0.1)  # the first piece is read before the rest comes
        writer.write(b"9\r\ndata: y\n\n\r\n")
        await writer.drain()
        writer.close()

    server, url = await raw_server(handle)
    c = client(total_timeout_s=3600.0)
    r = await c.post(url, PATH, b"{}", JSON)
    assert await r.content.readany() == b"data: x\n\n"
    assert await asyncio.wait_for(failure(r.content.readany()), GUARD_S) == "protocol"
    r.close()
    server.close()
    await c.close()


async def test_a_two_member_gzip_body_is_decoded_whole(site: Any) -> None:
    """Issue 35 item 7: gzip allows several members one after another; all are the body."""
    async def members(request: web.Request) -> web.Response:
        return web.Response(body=gzip.compress(b"first,") + gzip.compress(b"second"),
                            headers={"Content-Encoding": "gzip"})

    s = await site(members)
    c = client()
    assert await post_read(c, s.url) == b"first,second"
    await c.close()
