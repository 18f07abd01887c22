"""A vLLM-shaped backend process whose faults are switched on over HTTP (`POST /_fault`)."""

from __future__ import annotations

import asyncio
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
    (ok | hang | garbage | truncate | flaky | status | slow_first); `GET /_stats` reports counters."""

    mode: str = "ok"
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

    async def metrics(self, request: web.Request) -> web.Response:
        return web.Response(text=f'vllm:num_requests_running{{model_name="{MODEL}"}} 0.0\n')

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
