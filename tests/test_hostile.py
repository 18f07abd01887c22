"""Hostile input and misbehaving upstreams: one regression test per defect the hostile review found.

Each upstream misbehaviour is a real aiohttp server on 127.0.0.1 (the fake vLLM, or a few lines of app where
the fake has no such mode); the gateway runs in-process on loopback.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from conftest import fast_settings, start_gateway
from fakes import FakeBackend

from gateway.protocol import CHAT, request_view
from gateway.settings import Settings
from gateway.state import AppState

BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


async def _serve(routes: dict[str, Handler]) -> tuple[web.AppRunner, str]:
    app = web.Application()
    for path, handler in routes.items():
        app.router.add_route("*", path, handler)
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest.fixture
async def upstream() -> AsyncIterator[Callable[[dict[str, Handler]], Awaitable[str]]]:
    runners: list[web.AppRunner] = []

    async def make(routes: dict[str, Handler]) -> str:
        async def health(_: web.Request) -> web.Response:
            return web.Response(text="ok")

        runner, url = await _serve({"/health": health, **routes})
        runners.append(runner)
        return url

    yield make
    for runner in runners:
        await runner.cleanup()


async def _post(url: str, body: Any = BODY, headers: dict[str, str] | None = None,
                data: bytes | None = None) -> tuple[int, Any, dict[str, str]]:
    async with aiohttp.ClientSession() as s:
        kwargs: dict[str, Any] = {"data": data} if data is not None else {"json": body}
        async with s.post(url + CHAT, headers=headers, allow_redirects=False, **kwargs) as r:
            text = await r.text()
            try:
                parsed: Any = json.loads(text)
            except json.JSONDecodeError:
                parsed = text
            return r.status, parsed, dict(r.headers)


@pytest.mark.asyncio
async def test_gzip_request_body_is_forwarded_decoded_and_ejects_nobody(fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline"))
    try:
        for _ in range(4):
            status, _, _ = await _post(gw.url, data=gzip.compress(json.dumps(BODY).encode()),
                                       headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})
            assert status == 200
        assert "content-encoding" not in base.headers[-1]
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
@pytest.mark.parametrize("path", ["/v1/../admin/state", "/v1/%2e%2e/%2e%2e/secret", "/v1/models%2f..%2f..%2fsecret",
                                  "/v1/./../metrics", "/v1/..%5cmetrics"])
async def test_passthrough_never_leaves_v1(upstream: Any, path: str) -> None:
    seen: list[str] = []

    async def anything(request: web.Request) -> web.Response:
        seen.append(request.path)
        return web.json_response({"path": request.path})

    url = await upstream({"/{tail:.*}": anything})
    gw = await start_gateway(fast_settings(baseline_urls=[url], speculative_urls=[url]))
    try:
        host, port = gw.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))  # the raw path, as `curl --path-as-is`
        writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        head = (await reader.read(65536)).decode(errors="replace")
        writer.close()
        assert head.startswith(("HTTP/1.1 404", "HTTP/1.1 400")), head[:80]
        assert not [p for p in seen if not p.startswith("/v1/") and p != "/health" and p != "/metrics"]
        assert not [p for p in seen if ".." in p or p in ("/admin/state", "/secret")]
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_the_first_gap_of_a_stream_has_the_idle_limit(upstream: Any) -> None:
    async def stalls(request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(b'data: {"choices": [{"index": 0, "delta": {"content": "a"}}]}\n\n')
        await asyncio.sleep(30)
        return resp

    url = await upstream({CHAT: stalls})
    gw = await start_gateway(fast_settings(baseline_urls=[url], speculative_urls=[url], idle_timeout_s=0.3))
    try:
        t0 = time.monotonic()
        async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json={**BODY, "stream": True}) as r:
            with pytest.raises(aiohttp.ClientPayloadError):
                await r.read()  # the gateway ends the stream with an error event and a closed connection
        # bounded by the idle limit, not by the 30 s stall (a generous bound: only "not the stall" matters)
        assert time.monotonic() - t0 < 15
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_upstream_redirects_are_not_followed(upstream: Any) -> None:
    hits: list[str] = []

    async def redirect(request: web.Request) -> web.Response:
        hits.append(request.path)
        raise web.HTTPTemporaryRedirect("http://127.0.0.1:9/steal")

    url = await upstream({CHAT: redirect})
    gw = await start_gateway(fast_settings(baseline_urls=[url], speculative_urls=[url], eject_consecutive_failures=1))
    try:
        status, _, _ = await _post(gw.url)
        assert status == 307 and hits == [CHAT]  # passed through once, never re-posted
        assert all(b.routable(time.monotonic()) for b in gw.app[AppState.key].pool.backends)
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_a_non_utf8_or_forged_request_id_is_replaced(fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                                           log_requests=True))
    try:
        host, port = gw.url.removeprefix("http://").split(":")
        payload = json.dumps(BODY).encode()
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"x-request-id: \xff\xfe\x80bad\r\nConnection: close\r\n"
                     + f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
        await writer.drain()
        head = await reader.read(65536)
        writer.close()
        assert head.startswith(b"HTTP/1.1 200"), head[:80]
        sent = base.headers[-1]["x-request-id"]
        assert sent.isascii() and len(sent) == 32
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_upstream_answers_are_bounded(upstream: Any) -> None:
    async def huge(_: web.Request) -> web.Response:
        return web.Response(body=b"x" * (3 * 1024 * 1024), content_type="application/json")

    url = await upstream({CHAT: huge})
    gw = await start_gateway(fast_settings(baseline_urls=[url], speculative_urls=[url],
                                           max_upstream_body_bytes=1024 * 1024))
    try:
        status, body, _ = await _post(gw.url)
        assert status == 502 and body["error"]["code"] == "upstream_answer_too_large"
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_a_gzip_upstream_answer_reaches_the_client_decoded(upstream: Any) -> None:
    answer = {"id": "x", "object": "chat.completion", "choices": [], "usage": {"completion_tokens": 1}}

    async def gzipped(_: web.Request) -> web.Response:
        return web.Response(body=gzip.compress(json.dumps(answer).encode()),
                            headers={"Content-Encoding": "gzip", "Content-Type": "application/json"})

    url = await upstream({CHAT: gzipped})
    gw = await start_gateway(fast_settings(baseline_urls=[url], speculative_urls=[url]))
    try:
        status, body, _ = await _post(gw.url)
        assert status == 200 and body == answer
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_models_survives_a_backend_answering_an_array(upstream: Any,
                                                            fakes: tuple[FakeBackend, FakeBackend]) -> None:
    async def array(_: web.Request) -> web.Response:
        return web.json_response([1, 2, 3])

    base, _ = fakes
    url = await upstream({"/v1/models": array})
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[url]))
    try:
        async with aiohttp.ClientSession() as s, s.get(gw.url + "/v1/models") as r:
            assert r.status == 200
            assert [m["id"] for m in (await r.json())["data"]] == ["fake-model"]
    finally:
        await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_url_credentials_are_never_shown_and_work_with_an_upstream_key(upstream: Any) -> None:
    auths: list[str | None] = []

    async def echo(request: web.Request) -> web.Response:
        auths.append(request.headers.get("Authorization"))
        return web.json_response({"choices": [], "usage": {"completion_tokens": 1}})

    url = await upstream({CHAT: echo})
    with_creds = url.replace("http://", "http://user:s3cret@")
    for key in (None, "upkey"):
        gw = await start_gateway(fast_settings(baseline_urls=[with_creds], speculative_urls=[with_creds],
                                               upstream_api_key=key))
        try:
            status, _, _ = await _post(gw.url)
            assert status == 200
            async with aiohttp.ClientSession() as s:
                for path in ("/ready", "/admin/config", "/admin/state"):
                    async with s.get(gw.url + path) as r:
                        assert "s3cret" not in await r.text(), path
        finally:
            await gw.runner.cleanup()
    assert auths[0] is not None and auths[0].startswith("Basic ")
    assert auths[1] == "Bearer upkey"


def test_blank_api_keys_refuse_to_start(tmp_path: Any) -> None:
    with pytest.raises(ValueError):
        Settings(api_keys=" , ")  # type: ignore[arg-type]
    blank = tmp_path / "keys"
    blank.write_text("# no keys\n\n   \n")
    with pytest.raises(ValueError):
        Settings(api_keys_file=blank).client_keys()


def test_best_of_and_beam_search_count_as_several_sequences() -> None:
    assert request_view(CHAT, {**BODY, "best_of": 3}).n >= 2
    assert request_view(CHAT, {**BODY, "use_beam_search": True}).n >= 2
    assert request_view(CHAT, BODY).n == 1


def _events(*contents: str, usage: int = 7) -> bytes:
    def ev(d: dict[str, Any]) -> bytes:
        return b"data: " + json.dumps(d).encode() + b"\n\n"

    out = ev({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]})
    for c in contents:
        out += ev({"choices": [{"index": 0, "delta": {"content": c}}]})
    return out + ev({"choices": [], "usage": {"completion_tokens": usage}}) + b"data: [DONE]\n\n"


@pytest.mark.parametrize("strip", [False, True])
@pytest.mark.parametrize("size", [1, 5, 64, 1 << 20])
def test_sse_tap_counts_events_not_text_that_looks_like_them(strip: bool, size: int) -> None:
    """Generated text saying "data: " or "data: [DONE]" must not count as an engine step or end the stream
    (it taught the learner wrong tokens per step), however the bytes are split."""
    from gateway.streaming import SseTap

    stream = _events("say data: [DONE] now", "data: data: data:", "\n\ndata: [DONE]\n\n", "end")
    tap = SseTap(strip_usage=strip, chat=True)
    relayed = b"".join(tap.feed(stream[i:i + size]) for i in range(0, len(stream), size)) + tap.flush()
    assert tap.engine_steps == 4 and tap.completion_tokens == 7 and tap.done
    assert (b'"usage"' in relayed) is not strip
    early = SseTap(strip_usage=strip, chat=True)
    early.feed(_events("data: [DONE]").split(b'data: {"choices": [], "usage"')[0])
    assert not early.done


def test_a_huge_event_is_framed_in_linear_time() -> None:
    """32 MB in one event, fed in 64 KB pieces while usage is stripped: each piece is searched once."""
    from gateway.streaming import SseTap

    big = b'data: {"choices": [{"delta": {"content": "' + b"x" * (32 << 20) + b'"}}]}\n\n'
    tap = SseTap(strip_usage=True, chat=True)
    calls = 0
    for i in range(0, len(big), 1 << 16):
        calls += 1
        tap.feed(big[i:i + (1 << 16)])
    assert tap.data_events == 1 and calls == 513
    assert tap._searched == 0  # the event completed and the buffer was released
    assert not tap._pending


def test_message_count_is_bounded() -> None:
    from gateway.protocol import MAX_MESSAGES, InvalidRequest

    with pytest.raises(InvalidRequest) as err:
        request_view(CHAT, {"model": "m", "messages": [{}] * (MAX_MESSAGES + 1)})
    assert err.value.code == "too_many_messages"


@pytest.mark.asyncio
async def test_a_huge_body_is_parsed_off_the_event_loop(fakes: tuple[FakeBackend, FakeBackend]) -> None:
    """Eight megabytes of tiny messages: answered with a 400, and /health answers while it is parsed."""
    base, spec = fakes
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url]))
    try:
        payload = b'{"model": "m", "messages": [' + b",".join([b"{}"] * 2_000_000) + b"]}"
        async with aiohttp.ClientSession() as s:
            big = asyncio.create_task(s.post(gw.url + CHAT, data=payload, headers={"Content-Type": "application/json"}))
            await asyncio.sleep(0)
            async with s.get(gw.url + "/health") as h:
                assert h.status == 200
            r = await big
            assert r.status == 400 and (await r.json())["error"]["code"] == "too_many_messages"
    finally:
        await gw.runner.cleanup()
