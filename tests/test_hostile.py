"""Hostile input: one regression test per defect a hostile review found, each against a real
gateway on 127.0.0.1 in front of real aiohttp upstreams that misbehave on purpose.

Where a test needs a bound in time, it is a deadlock guard many times the expected time, never a speed
target: the assertion is about what happened (who answered first, whether the error event arrived at all).
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web

from gateway.app import create_app
from gateway.bench.kit.fake_vllm import FakeBackend
from gateway.bench.kit.inproc import RunningGateway, fast_settings, serve_app, until
from gateway.bench.kit.procs import fake_pair_gateway
from gateway.core.protocol import CHAT, request_view
from gateway.server import GuardedSite, JsonLineFormatter, make_runner
from gateway.settings import Settings
from gateway.state import AppState
from gateway.streaming import SseTap

BODY: dict[str, Any] = {"model": "fake-model", "messages": [{"role": "user", "content": "hello there"}],
                        "max_tokens": 16}
GUARD_S = 10.0  # deadlock guard: far above anything these tests wait for

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Upstream:
    """A vLLM-shaped upstream whose completion (and any other path) is whatever the test says."""

    def __init__(self, handler: Handler, models: bool = False) -> None:
        self.handler = handler
        self.models = models  # whether the handler also answers GET /v1/models (the gateway's discovery polls it)
        self.paths: list[str] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def _any(self, request: web.Request) -> web.StreamResponse:
        self.paths.append(request.raw_path)
        return await self.handler(request)

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/health", _health)
        app.router.add_get("/metrics", _health)
        if not self.models:
            app.router.add_get("/v1/models", _no_models)
        app.router.add_route("*", "/{tail:.*}", self._any)
        self._runner, self.url = await serve_app(app)
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


async def _no_models(request: web.Request) -> web.Response:
    return web.Response(status=404)


async def _health(request: web.Request) -> web.Response:
    return web.Response(text="")


async def _empty_json(request: web.Request) -> web.Response:
    return web.json_response({})


@pytest.fixture
async def upstreams() -> AsyncIterator[Callable[..., Awaitable[Upstream]]]:
    started: list[Upstream] = []

    async def make(handler: Handler, models: bool = False) -> Upstream:
        up = Upstream(handler, models)
        await up.start()
        started.append(up)
        return up

    yield make
    for up in started:
        await up.stop()


@contextlib.asynccontextmanager
async def guarded_gateway(**overrides: Any) -> AsyncIterator[RunningGateway]:
    """The gateway as `serve` runs it: the same runner (header timeout) and site (connection cap)."""
    settings = fast_settings(host="127.0.0.1", port=0, **overrides)
    app = create_app(settings)
    runner = make_runner(app, settings)
    await runner.setup()
    site = GuardedSite(runner, settings)
    await site.start()
    try:
        yield RunningGateway(runner, f"http://127.0.0.1:{site.bound_port}", app)
    finally:
        await runner.cleanup()


async def endless_sse(request: web.Request) -> web.StreamResponse:
    """An upstream that streams a chunk every 50 ms and never ends."""
    resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await resp.prepare(request)
    while True:
        await resp.write(sse(chunk("x")))
        await asyncio.sleep(0.05)


async def raw_http(url: str, head: bytes, body: bytes = b"") -> tuple[int, bytes]:
    """Send bytes as they are (paths not normalised, headers not encoded) and read the whole answer."""
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(head + body)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), GUARD_S)
    writer.close()
    return int(data.split(b" ", 2)[1]), data


def sse(obj: dict[str, Any] | str) -> bytes:
    return b"data: " + (obj.encode() if isinstance(obj, str) else orjson.dumps(obj)) + b"\n\n"


def chunk(content: str) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": content}}]}


# ------------------------------------------------------------------ 1. request-caused failures

async def test_1_gzip_request_body_is_forwarded_decoded(gateway_factory: Any,
                                                       fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline")
    async with aiohttp.ClientSession() as s:
        for _ in range(3):
            async with s.post(gw.url + CHAT, data=gzip.compress(orjson.dumps(BODY)),
                              headers={"Content-Encoding": "gzip", "Content-Type": "application/json"}) as r:
                assert r.status == 200, await r.text()
        async with s.get(gw.url + "/ready") as r:
            assert all(b["ejections"] == 0 for b in (await r.json())["backends"])
    assert all("content-encoding" not in {k.lower() for k in h} for h in base.headers)


async def test_1_header_bytes_that_are_not_utf8_pass_through_not_a_500(gateway_factory: Any,
                                                                      fakes: tuple[FakeBackend, FakeBackend]) -> None:
    """A client's header value with bytes that are not UTF-8 reached the upstream client as lone surrogates, and
    encoding the request head failed: a 500 for any such client. Now the value goes upstream with the bytes that
    are not UTF-8 replaced by U+FFFD (aiohttp's writer sends text; the UTF-8 part is kept)."""
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline")
    body = orjson.dumps(BODY)
    head = (b"POST " + CHAT.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"X-Odd: caf\xc3\xa9 \xff\xfe\r\nConnection: close\r\nContent-Length: %d\r\n\r\n" % len(body))
    status, answer = await raw_http(gw.url, head, body)
    assert status == 200, answer[-300:]
    assert base.headers[-1]["x-odd"] == "café \ufffd\ufffd"


async def test_1_a_500_that_follows_the_request_ejects_nothing(gateway_factory: Any) -> None:
    fakes = [FakeBackend(mode="status", status=500), FakeBackend(mode="status", status=500)]
    for f in fakes:
        await f.start()
    try:
        gw = await gateway_factory(baseline_urls=[fakes[0].url], speculative_urls=[fakes[1].url],
                                   policy="baseline", eject_consecutive_failures=2, max_attempts=3)
        async with aiohttp.ClientSession() as s:
            for _ in range(3):
                async with s.post(gw.url + CHAT, json=BODY) as r:
                    assert r.status == 500  # the upstream's own answer, passed through
            async with s.get(gw.url + "/ready") as r:
                ready = await r.json()
        assert r.status == 200 and all(b["ejections"] == 0 for b in ready["backends"]), ready
        assert sum(f.calls for f in fakes) == 2 * 3  # two backends each, never a third replay
    finally:
        for f in fakes:
            await f.stop()


async def test_1_long_non_streamed_answer_is_not_timed_as_a_first_byte(
        gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    base.first_delay_s = 1.0  # the whole answer takes a second; the first-byte timeout is 0.3 s
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               first_byte_timeout_s=0.3, nonstream_timeout_per_token_s=0.5)
    async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json={**BODY, "stream": False}) as r:
        assert r.status == 200, await r.text()
        assert r.headers["x-specgate-backend"] == "baseline"
    assert base.calls == 1 and spec.calls == 0


# ------------------------------------------------------------------ 2. passthrough path traversal

@pytest.mark.parametrize("path", [b"/v1/../admin/state", b"/v1/%2e%2e/%2e%2e/secret", b"/v1/models%2f..%2f..%2fx",
                                  b"/v1/./../metrics"])
async def test_2_passthrough_never_leaves_v1(gateway_factory: Any, upstreams: Any, path: bytes) -> None:
    up = await upstreams(_empty_json)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline",
                               upstream_api_key="upstream-secret")
    status, data = await raw_http(gw.url, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert status in (400, 404), data
    assert b'"error"' in data
    assert all(p.startswith("/v1/") and ".." not in p and "%2" not in p.lower() for p in up.paths), up.paths


# ------------------------------------------------------------------ 3. idle timeout after the first chunk

async def test_3_first_gap_after_the_first_chunk_is_idle_timed(gateway_factory: Any, upstreams: Any) -> None:
    async def stall(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(sse(chunk("hi")))
        await asyncio.sleep(3600)
        return resp

    up = await upstreams(stall)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline",
                               idle_timeout_s=0.3)
    text = await _stream_text(gw.url, {**BODY, "stream": True})
    assert "idle timeout" in text, text


async def test_3_total_timeout_mid_stream_is_called_total(gateway_factory: Any, upstreams: Any) -> None:
    up = await upstreams(endless_sse)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline",
                               idle_timeout_s=5.0, total_timeout_s=1.0)
    text = await _stream_text(gw.url, {**BODY, "stream": True})
    assert "total timeout" in text and "idle" not in text.rsplit("data: ", 1)[-1], text[-300:]


async def _stream_text(url: str, payload: dict[str, Any]) -> str:
    data = b""
    async with aiohttp.ClientSession() as s, s.post(url + CHAT, json=payload,
                                                    timeout=aiohttp.ClientTimeout(total=GUARD_S)) as r:
        with contextlib.suppress(aiohttp.ClientPayloadError):
            async for part in r.content.iter_any():
                data += part
    return data.decode()


# ------------------------------------------------------------------ 4. redirects

async def test_4_upstream_redirect_is_not_followed(gateway_factory: Any, upstreams: Any,
                                                   fakes: tuple[FakeBackend, FakeBackend]) -> None:
    _, spec = fakes
    elsewhere = await upstreams(_empty_json)

    async def redirect(request: web.Request) -> web.Response:
        raise web.HTTPTemporaryRedirect(elsewhere.url + request.path)

    up = await upstreams(redirect)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[spec.url], policy="baseline")
    async with aiohttp.ClientSession() as s:
        async with s.post(gw.url + CHAT, json=BODY) as r:
            assert r.status == 200 and r.headers["x-specgate-backend"] == "speculative"
        async with s.get(gw.url + "/v1/redirected") as r:
            assert "location" not in {k.lower() for k in r.headers}
    assert elsewhere.paths == [] and len(up.paths) == 2


# ------------------------------------------------------------------ 5. request ids and logs

async def test_5_non_utf8_request_id_keeps_failover_and_the_log_line(
        gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend], caplog: pytest.LogCaptureFixture) -> None:
    base, spec = fakes
    base.mode, base.status = "status", 503
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               log_requests=True, eject_consecutive_failures=100)
    caplog.set_level(logging.INFO)
    body = orjson.dumps(BODY)
    head = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"x-request-id: \xff\xfe\x80evil\r\nConnection: close\r\nContent-Length: " + str(len(body)).encode()
            + b"\r\n\r\n")
    status, data = await raw_http(gw.url, head, body)
    assert status == 200, data
    def logged() -> list[dict[str, Any]]:  # the access line is written just after the response
        return [orjson.loads(rec.getMessage()) for rec in caplog.records if rec.name == "specgate.access"]

    await until(lambda: any(line.get("event") == "request" and line.get("status") == "200" for line in logged()),
                GUARD_S)


def test_5_json_log_lines_keep_tracebacks() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = logging.LogRecord("specgate", logging.ERROR, __file__, 1, '{"event": "x"}', None, sys.exc_info())
    line = orjson.loads(JsonLineFormatter().format(record))
    assert line["event"] == "x" and "RuntimeError: boom" in line["traceback"]


def test_5_malformed_requests_log_one_line_not_a_traceback() -> None:
    from aiohttp.http_exceptions import BadHttpMessage

    from gateway.server import _client_errors_without_traceback

    try:
        raise BadHttpMessage("Unexpected whitespace after header value")
    except BadHttpMessage:
        record = logging.LogRecord("aiohttp.server", logging.ERROR, __file__, 1, "Error handling request from %s",
                                   ("127.0.0.1",), sys.exc_info())
    assert _client_errors_without_traceback(record)
    line = orjson.loads(JsonLineFormatter().format(record))
    assert "traceback" not in line and line["level"] == "info" and "BadHttpMessage 400" in line["message"]


# ------------------------------------------------------------------ 6. drain

async def test_6_drain_waits_for_passthrough(tmp_path: Path, upstreams: Any) -> None:
    async def slow(request: web.Request) -> web.Response:
        await asyncio.sleep(1.5)
        return web.json_response({"slow": True})

    up = await upstreams(slow)
    base = FakeBackend(url=up.url)
    async with fake_pair_gateway(base.url, base.url, tmp_path, SPECGATE_DRAIN_TIMEOUT_S="10") as (proc, url):
        async with aiohttp.ClientSession() as s:
            pending = asyncio.create_task(s.get(url + "/v1/slow", timeout=aiohttp.ClientTimeout(total=GUARD_S)))
            await until(lambda: bool(up.paths), GUARD_S)  # the request is at the upstream
            os.kill(proc.pid, signal.SIGTERM)
            r = await pending
            assert r.status == 200 and (await r.json()) == {"slow": True}
        assert await asyncio.wait_for(proc.wait(), GUARD_S) == 0


async def test_6_streams_cut_at_the_end_of_a_drain_get_an_error_event(tmp_path: Path, upstreams: Any) -> None:
    up = await upstreams(endless_sse)
    base = FakeBackend(url=up.url)
    async with (fake_pair_gateway(base.url, base.url, tmp_path, SPECGATE_DRAIN_TIMEOUT_S="0.5") as (proc, url),
                aiohttp.ClientSession() as s,
                s.post(url + CHAT, json={**BODY, "stream": True}, timeout=aiohttp.ClientTimeout(total=GUARD_S)) as r):
        await r.content.readuntil(b"\n\n")
        os.kill(proc.pid, signal.SIGTERM)
        data = b""
        with contextlib.suppress(aiohttp.ClientPayloadError):
            async for part in r.content.iter_any():
                data += part
    assert b"shutting down" in data, data[-300:]


# ------------------------------------------------------------------ 7. SSE framing

def test_7_sse_tap_reads_events_not_substrings() -> None:
    tap = SseTap(strip_usage=False, chat=True)
    hostile = sse(chunk("say data: [DONE] now")) + sse(chunk("data: data: data: "))
    for i in range(0, len(hostile), 7):  # split anywhere
        tap.feed(hostile[i:i + 7])
    assert tap.data_events == 2 and not tap.done
    tap.feed(sse({"choices": [], "usage": {"completion_tokens": 5}}) + b"data: [DONE]\n")
    tap.feed(b"\n")
    assert tap.done and tap.completion_tokens == 5 and tap.data_events == 4 and tap.usage_events == 1
    whole = SseTap(strip_usage=False, chat=True)  # whole events take the fast path: the same reading
    for event in (sse(chunk("say data: [DONE] now")), sse(chunk("data: data: data: ")) + b": ping\n\n"):
        whole.feed(event)
    assert whole.data_events == 2 and not whole.done


async def test_7_literal_done_in_content_does_not_end_the_stream(gateway_factory: Any, upstreams: Any) -> None:
    async def liar(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(sse(chunk("data: [DONE]")))
        return resp  # ends without a real [DONE]

    up = await upstreams(liar)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline")
    text = await _stream_text(gw.url, {**BODY, "stream": True})
    assert "ended without [DONE]" in text, text


# ------------------------------------------------------------------ 8. large SSE events

@pytest.mark.parametrize("migration", [False, True])
async def test_8_large_event_is_relayed_as_it_arrives_when_stripping_usage(gateway_factory: Any, upstreams: Any,
                                                                           migration: bool) -> None:
    """With live migration the stream is joined event by event: an event this large (1 MiB) turns it into a plain
    relay (`gateway.join_relay.JOIN_EVENT_MAX`); before 2026-12-06 n it was held whole."""
    received = asyncio.Event()

    async def huge(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b'data: {"choices":[{"index":0,"delta":{"content":"')
        for _ in range(64):
            await resp.write(b"a" * 16384)
        await asyncio.wait_for(received.wait(), GUARD_S)  # the rest only once the client has the start
        await resp.write(b'"}}]}\n\n' + sse({"choices": [], "usage": {"completion_tokens": 1}}) + b"data: [DONE]\n\n")
        return resp

    up = await upstreams(huge)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline",
                               migration=migration)
    data = b""
    async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json={**BODY, "stream": True},
                                                    timeout=aiohttp.ClientTimeout(total=GUARD_S)) as r:
        async for part in r.content.iter_any():
            data += part
            if len(data) > 512 * 1024:
                received.set()
    assert data.endswith(b"data: [DONE]\n\n") and b'"usage"' not in data  # stripped: the client did not ask


# ------------------------------------------------------------------ 9. bounded upstream bodies

async def test_9_upstream_answer_over_the_limit_is_refused_not_buffered(gateway_factory: Any,
                                                                        upstreams: Any) -> None:
    async def enormous(request: web.Request) -> web.Response:
        return web.json_response({"choices": [{"message": {"content": "a" * (4 << 20)}}]})

    up = await upstreams(enormous)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline",
                               max_response_bytes=1 << 20)
    async with aiohttp.ClientSession() as s:
        async with s.post(gw.url + CHAT, json=BODY) as r:
            assert r.status == 502 and (await r.json())["error"]["code"] == "upstream_response_too_large"
        async with s.get(gw.url + "/ready") as r:
            assert all(b["ejections"] == 0 for b in (await r.json())["backends"])
    assert len(up.paths) == 1  # the request's own answer: not replayed


@pytest.mark.parametrize("stream", [False, True])
async def test_9_a_movable_request_never_holds_an_endless_event(gateway_factory: Any, upstreams: Any,
                                                                stream: bool) -> None:
    """With live migration a request's stream is joined event by event: an event that never ends is refused at the
    size limit, not held (before 2026-12-06 n the joiner's buffer grew without bound)."""
    async def endless(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b'data: {"choices":[{"index":0,"delta":{"content":"')
        with contextlib.suppress(ConnectionError, RuntimeError):  # the gateway hangs up at the limit
            for _ in range(256):  # 4 MiB at most, the limit below is 64 KiB
                await resp.write(b"a" * 16384)
        return resp

    up = await upstreams(endless)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline", migration=True,
                               max_response_bytes=64 * 1024)
    async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json={**BODY, "stream": stream},
                                                    timeout=aiohttp.ClientTimeout(total=GUARD_S)) as r:
        if not stream:
            assert r.status == 502 and (await r.json())["error"]["code"] == "upstream_response_too_large"
            return
        data = b""
        with contextlib.suppress(aiohttp.ClientPayloadError):  # the stream ends with an error event, then closes
            async for part in r.content.iter_any():
                data += part
    assert b"over the size limit" in data and len(data) < 64 * 1024


# ------------------------------------------------------------------ 10. compressed upstream answers

async def test_10_gzip_upstream_answer_reaches_the_client_decodable(gateway_factory: Any, upstreams: Any) -> None:
    payload = {"id": "x", "choices": [{"message": {"content": "hi"}}], "usage": {"completion_tokens": 1}}

    async def gzipped(request: web.Request) -> web.Response:
        return web.Response(body=gzip.compress(orjson.dumps(payload)),
                            headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})

    up = await upstreams(gzipped)
    gw = await gateway_factory(baseline_urls=[up.url], speculative_urls=[up.url], policy="baseline")
    async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json=BODY) as r:
        assert r.status == 200 and orjson.loads(await r.read()) == payload


async def test_10_an_upstream_cookie_never_reaches_another_clients_request(gateway_factory: Any,
                                                                           upstreams: Any) -> None:
    """The upstream session keeps no cookies: one client's `Set-Cookie` from a backend was stored by the shared
    client session and sent with every later request to that backend, whoever made it."""
    payload = {"id": "x", "choices": [{"message": {"content": "hi"}}], "usage": {"completion_tokens": 1}}
    cookies: list[str | None] = []

    async def sets_a_cookie(request: web.Request) -> web.Response:
        cookies.append(request.headers.get("Cookie"))
        response = web.json_response(payload)
        response.set_cookie("session", f"client-{len(cookies)}")
        return response

    up = await upstreams(sets_a_cookie)
    named = up.url.replace("127.0.0.1", "localhost")  # a jar keeps no cookies of a bare IP address, but of names
    gw = await gateway_factory(baseline_urls=[named], speculative_urls=[named], policy="baseline")
    for _ in range(2):
        async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json=BODY) as r:
            assert r.status == 200
    assert cookies == [None, None]


# ------------------------------------------------------------------ 11. /v1/models shapes

async def test_11_models_survives_a_backend_answering_an_array(gateway_factory: Any, upstreams: Any,
                                                               fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, _ = fakes
    odd = await upstreams(_array, models=True)
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[odd.url], policy="baseline")
    async with aiohttp.ClientSession() as s, s.get(gw.url + "/v1/models") as r:
        assert r.status == 200
        assert [m["id"] for m in (await r.json())["data"]] == ["fake-model", "m"]  # the fake's name and alias


async def _array(request: web.Request) -> web.Response:
    return web.json_response([1, 2, 3])


# ------------------------------------------------------------------ 12. credentials in backend URLs

async def test_12_url_credentials_never_shown(gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    secret_url = base.url.replace("http://", "http://alice:hunter2@")
    gw = await gateway_factory(baseline_urls=[secret_url], speculative_urls=[spec.url], policy="baseline")
    async with aiohttp.ClientSession() as s:
        for path in ("/ready", "/admin/config", "/admin/state"):
            async with s.get(gw.url + path) as r:
                text = await r.text()
                assert "hunter2" not in text and "alice" not in text, (path, text)


# ------------------------------------------------------------------ 13. CPU amplification

async def test_13_huge_structured_body_does_not_stall_the_loop(gateway_factory: Any,
                                                               fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline")
    n = 2_600_000
    body = b'{"model":"m","messages":[' + b"{}," * n + b"5]}"  # ~8 MB; invalid only at the very end
    order: list[str] = []
    host, port = gw.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    await writer.drain()

    async def big() -> None:
        data = await asyncio.wait_for(reader.read(), GUARD_S * 3)
        assert data.split(b" ", 2)[1] == b"400", data[:200]
        order.append("big")

    async def health() -> None:
        await until(lambda: gw.app[AppState.key].active_requests >= 1, GUARD_S)  # the gateway has the body
        async with aiohttp.ClientSession() as s, s.get(gw.url + "/health") as r:
            assert r.status == 200
        order.append("health")

    await asyncio.gather(big(), health())
    writer.close()
    assert order == ["health", "big"]


async def test_13_large_valid_body_is_parsed_off_loop_and_served(gateway_factory: Any,
                                                                  fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               offload_parse_bytes=1024)
    big = {**BODY, "stream": True, "messages": [{"role": "user", "content": "word " * 20000}]}
    text = await _stream_text(gw.url, big)
    assert text.rstrip().endswith("data: [DONE]") and '"usage"' not in text  # usage added, then stripped
    assert base.bodies[-1]["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}  # migration


# ------------------------------------------------------------------ 14. slowloris

async def test_14_partial_headers_are_closed_after_the_header_timeout(fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    async with guarded_gateway(baseline_urls=[base.url], speculative_urls=[spec.url], header_timeout_s=0.5) as gw:
        host, port = gw.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")  # never finished
        assert await asyncio.wait_for(reader.read(), GUARD_S) == b""  # closed by the gateway
        writer.close()


async def test_14_unfinished_body_gets_408(fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    async with guarded_gateway(baseline_urls=[base.url], speculative_urls=[spec.url], body_timeout_s=0.5) as gw:
        host, port = gw.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"model\"")
        data = await asyncio.wait_for(reader.read(), GUARD_S)
        assert data.split(b" ", 2)[1] == b"408" and b"request_timeout" in data, data
        writer.close()


async def test_14_connections_over_the_cap_are_refused(fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    async with guarded_gateway(baseline_urls=[base.url], speculative_urls=[spec.url],
                               max_client_connections=3) as gw:
        host, port = gw.url.removeprefix("http://").split(":")
        idle = [await asyncio.open_connection(host, int(port)) for _ in range(3)]
        server = gw.runner.server
        assert server is not None
        await until(lambda: len(server.connections) >= 3, GUARD_S)
        reader, writer = await asyncio.open_connection(host, int(port))
        data = await asyncio.wait_for(reader.read(), GUARD_S)
        assert data.startswith(b"HTTP/1.1 503"), data
        for _, w in [*idle, (reader, writer)]:
            w.close()
        await until(lambda: not server.connections, GUARD_S)
        async with aiohttp.ClientSession() as s, s.get(gw.url + "/health") as r:  # room again once they close
            assert r.status == 200


# ------------------------------------------------------------------ 15. URL credentials with an upstream key

def test_15_url_credentials_with_an_upstream_key_refuse_to_start() -> None:
    settings = Settings(baseline_urls=["http://u:pw@127.0.0.1:9"], speculative_urls=["http://127.0.0.1:9"],
                        upstream_api_key="k")
    with pytest.raises(ValueError, match="credentials"):
        create_app(settings)


# ------------------------------------------------------------------ also

def test_blank_api_keys_refuse_to_start(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no key"):
        Settings(api_keys=" , ")
    blank = tmp_path / "keys"
    blank.write_text("  \n# only a comment\n\n")
    with pytest.raises(ValueError, match="no key"):
        Settings(api_keys_file=blank).client_keys()


@pytest.mark.parametrize("extra", [{"best_of": 3}, {"use_beam_search": True}, {"n": 2}])
def test_best_of_and_beam_search_count_as_several_sequences(extra: dict[str, Any]) -> None:
    assert request_view(CHAT, {**BODY, **extra}).n > 1
