"""A vLLM-shaped backend process whose faults are switched on over HTTP (`POST /_fault`)."""

from __future__ import annotations

import asyncio
import gzip
import time
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

CHAT = "/v1/chat/completions"
MODEL = "fault-model"


@dataclass
class FaultBackend:
    """vLLM-shaped: streams `chunks` events `chunk_delay_s` apart; `POST /_fault` switches the mode
    (ok | hang | garbage | truncate | flaky | status | slow_first, or one of `WIRE_MODES`: bytes on the wire
    that aiohttp's server would never send) and `metrics_mode` (ok | hang | huge | endless_headers);
    `GET /_stats` reports counters."""

    mode: str = "ok"
    metrics_mode: str = "ok"
    chunks: int = 8
    chunk_delay_s: float = 0.02
    first_delay_s: float = 0.0
    calls: int = 0
    completed: int = 0
    aborts: list[float] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post(CHAT, self.completion)
        app.router.add_get("/health", self.health)
        app.router.add_get("/metrics", self.metrics)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/_fault", self.fault)
        app.router.add_get("/_stats", self.stats)
        return app

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def metrics(self, request: web.Request) -> web.StreamResponse:
        page = f'vllm:num_requests_running{{model_name="{MODEL}"}} 0.0\n'
        if self.metrics_mode == "hang":
            await asyncio.sleep(3600)
        elif self.metrics_mode == "huge":  # 8 MiB: over the gateway's scrape cap
            page += "# padding\n" * (8 << 17)
        elif self.metrics_mode == "endless_headers":
            await endless(request, b"HTTP/1.1 200 OK\r\n", b"X-Pad: " + b"p" * 8000 + b"\r\n")
        return web.Response(text=page)

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def fault(self, request: web.Request) -> web.Response:
        for name, value in (await request.json()).items():
            setattr(self, name, value)
        return await self.stats(request)

    async def stats(self, request: web.Request) -> web.Response:
        return web.json_response({"mode": self.mode, "calls": self.calls, "completed": self.completed,
                                  "aborts": self.aborts})

    async def completion(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        body = await request.json()
        mode = self.mode
        if mode == "flaky":
            mode = "status" if self.calls % 2 else "ok"
        if mode == "status":
            return web.json_response({"error": {"message": "injected", "type": "InternalServerError",
                                                "param": None, "code": 500}}, status=500)
        if mode in WIRE_MODES:
            return await wire(request, mode, bool(body.get("stream")))
        try:
            if mode == "hang":
                await asyncio.sleep(3600)
            if self.first_delay_s:
                await asyncio.sleep(self.first_delay_s)
            if not body.get("stream"):
                await asyncio.sleep(self.chunk_delay_s * self.chunks)
                self.completed += 1
                return web.json_response({
                    "id": "cmpl-f", "object": "chat.completion", "model": MODEL,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "tok " * self.chunks},
                                 "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": self.chunks,
                              "total_tokens": self.chunks + 3}})
            return await self._stream(request, body, mode)
        except (asyncio.CancelledError, ConnectionResetError):
            self.aborts.append(time.monotonic())  # CLOCK_MONOTONIC: comparable across processes on Linux
            raise

    async def _stream(self, request: web.Request, body: dict[str, Any], mode: str) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        if mode == "garbage":
            await resp.write(b"data: {\"choices\": [{\"delta\": {\"content\": \"ok\"}}]}\n\ndata: {not json\x00\xff")
            return resp
        for i in range(self.chunks):
            if mode == "truncate" and i == self.chunks // 2:
                assert request.transport is not None
                request.transport.close()
                return resp
            await asyncio.sleep(self.chunk_delay_s)
            event = {"object": "chat.completion.chunk", "model": MODEL,
                     "choices": [{"index": 0, "delta": {"content": "tok "},
                                  "finish_reason": "length" if i == self.chunks - 1 else None}]}
            await resp.write(b"data: " + orjson.dumps(event) + b"\n\n")
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            usage = {"prompt_tokens": 3, "completion_tokens": self.chunks, "total_tokens": self.chunks + 3}
            await resp.write(b"data: " + orjson.dumps({"choices": [], "usage": usage}) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        self.completed += 1
        await resp.write_eof()
        return resp


WIRE_MODES = {
    "endless_headers": "headers that never end (8 KB each)",
    "endless_header_value": "one header value that never ends",
    "leftover_bytes": "a whole answer, then a second one (X-Smuggled) in the same packet",
    "truncated_chunked": "`Transfer-Encoding: Chunked`, the connection closed half-way through the body",
    "two_te_headers": "two Transfer-Encoding headers, the body cut short",
    "two_member_gzip": "a non-streamed answer gzip-encoded as two members (streams: a plain answer)",
    "switch_101": "101 Switching Protocols to a POST",
}
_JSON = (b'{"id":"cmpl-w","object":"chat.completion","model":"fault-model","choices":[{"index":0,"message":'
         b'{"role":"assistant","content":"tok tok"},"finish_reason":"length"}],"usage":{"prompt_tokens":3,'
         b'"completion_tokens":2,"total_tokens":5}}')
_SSE = (b'data: {"object":"chat.completion.chunk","model":"fault-model","choices":[{"index":0,"delta":'
        b'{"content":"tok "},"finish_reason":"length"}]}\n\ndata: [DONE]\n\n')


async def endless(request: web.Request, head: bytes, piece: bytes) -> None:
    """Write `head`, then `piece` until the client closes the connection (kept under 1 MB of send buffer)."""
    transport = request.transport
    assert transport is not None
    transport.write(head)
    while not transport.is_closing():
        if transport.get_write_buffer_size() < 1 << 20:
            transport.write(piece)
        else:
            await asyncio.sleep(0.005)


async def wire(request: web.Request, mode: str, stream: bool) -> web.StreamResponse:
    """Answer with raw bytes, then close the connection (the returned response is never sent)."""
    if mode == "endless_headers":
        await endless(request, b"HTTP/1.1 200 OK\r\n", b"X-Pad: " + b"p" * 8000 + b"\r\n")
        return web.Response()
    if mode == "endless_header_value":
        await endless(request, b"HTTP/1.1 200 OK\r\nX-Long: ", b"v" * 8192)
        return web.Response()
    body, kind = (_SSE, b"text/event-stream") if stream else (_JSON, b"application/json")
    head = b"HTTP/1.1 200 OK\r\nContent-Type: " + kind + b"\r\n"
    if mode == "leftover_bytes":
        data = (head + b"Content-Length: %d\r\n\r\n" % len(body) + body
                + b"HTTP/1.1 200 OK\r\nX-Smuggled: 1\r\nContent-Length: 4\r\n\r\nevil")
    elif mode in ("truncated_chunked", "two_te_headers"):
        te = b"Transfer-Encoding: Chunked\r\n" if mode == "truncated_chunked" else \
            b"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n"
        data = head + te + b"\r\n%x\r\n" % len(body) + body[: len(body) // 2]
    elif mode == "two_member_gzip" and not stream:
        packed = gzip.compress(body[:40]) + gzip.compress(body[40:])
        data = head + b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(packed) + packed
    elif mode == "two_member_gzip":
        data = head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    else:  # switch_101
        data = b"HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n\x00\x01"
    transport = request.transport
    assert transport is not None
    transport.write(data)
    if mode == "leftover_bytes":
        await asyncio.sleep(0.05)  # the leftovers came in the answer's packet; the connection is dropped later
    transport.close()
    return web.Response()


def answer_failure(status: int, data: bytes, stream: bool) -> str | None:
    """Why an answer does not count as completed (its status, or `incomplete`), or None when it does."""
    if status != 200:
        return str(status)
    return None if complete_answer(data, stream) else "incomplete"


def complete_answer(data: bytes, stream: bool) -> bool:
    """A whole answer: a stream that reached `data: [DONE]`, or a completion with its choices."""
    return data.rstrip().endswith(b"data: [DONE]") if stream else b'"choices"' in data


async def serve_backend() -> None:
    runner = web.AppRunner(FaultBackend().app(), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"http://127.0.0.1:{port}", flush=True)
    await asyncio.Event().wait()
