"""A small vLLM-shaped backend with injectable faults, for gateway tests (real aiohttp server on 127.0.0.1).

The emulator is the faithful backend; this one exists to misbehave on demand: answer 500/503, hang,
send garbage or a truncated stream, fail every other request, and record what it saw (bodies, headers,
aborts with their time).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

from aiohttp import web


@dataclass
class FakeBackend:
    model: str = "fake-model"
    # the other names it answers to (it answers to any), listed in /v1/models as vLLM lists `--served-model-name`s
    aliases: tuple[str, ...] = ("m",)
    mode: str = "ok"  # ok | status | hang | garbage | truncate | flaky | slow_first
    status: int = 500
    chunks: int = 5
    tokens_per_chunk: int = 1
    chunk_delay_s: float = 0.0
    first_delay_s: float = 0.0
    bodies: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    aborted: list[tuple[str, float]] = field(default_factory=list)
    completed: int = 0
    healthy: bool = True
    spec: bool = False
    response_headers: dict[str, str] = field(default_factory=dict)  # added to completion responses
    calls: int = 0
    url: str = ""
    _runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completion)
        app.router.add_post("/v1/completions", self._completion)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/health", self._health)
        app.router.add_get("/metrics", self._metrics)
        app.router.add_route("*", "/v1/{tail:.*}", self._other)
        return app

    async def start(self) -> str:
        self._runner = web.AppRunner(self.app(), handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _health(self, request: web.Request) -> web.Response:
        return web.Response(status=200 if self.healthy else 503)

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": name, "object": "model"}
                                                             for name in (self.model, *self.aliases)]})

    async def _other(self, request: web.Request) -> web.Response:
        return web.json_response({"path": request.path, "method": request.method})

    async def _metrics(self, request: web.Request) -> web.Response:
        lines = [
            "# TYPE vllm:num_requests_running gauge",
            f'vllm:num_requests_running{{engine="0",model_name="{self.model}"}} 0.0',
            "# TYPE vllm:num_requests_waiting gauge",
            f'vllm:num_requests_waiting{{engine="0",model_name="{self.model}"}} 0.0',
            "# TYPE vllm:kv_cache_usage_perc gauge",
            f'vllm:kv_cache_usage_perc{{engine="0",model_name="{self.model}"}} 0.0',
        ]
        if self.spec:
            n = self.completed
            lines += [
                "# TYPE vllm:spec_decode_num_drafts_total counter",
                f'vllm:spec_decode_num_drafts_total{{engine="0",model_name="{self.model}"}} {10.0 * n}',
                "# TYPE vllm:spec_decode_num_draft_tokens_total counter",
                f'vllm:spec_decode_num_draft_tokens_total{{engine="0",model_name="{self.model}"}} {40.0 * n}',
                "# TYPE vllm:spec_decode_num_accepted_tokens_total counter",
                f'vllm:spec_decode_num_accepted_tokens_total{{engine="0",model_name="{self.model}"}} {20.0 * n}',
            ]
        return web.Response(text="\n".join(lines) + "\n", content_type="text/plain")

    async def _completion(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        body = await request.json()
        self.bodies.append(body)
        self.headers.append({k.lower(): v for k, v in request.headers.items()})
        rid = request.headers.get("x-request-id", "")
        mode = self.mode
        if mode == "flaky":
            mode = "status" if self.calls % 2 == 1 else "ok"
        if mode == "status":
            return web.json_response({"error": {"message": "injected", "type": "InternalServerError",
                                                "param": None, "code": self.status}}, status=self.status)
        if mode == "hang":
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.aborted.append((rid, time.monotonic()))
                raise
        if mode == "garbage" and not body.get("stream"):
            return web.Response(body=b"\x00\xffnot json at all", content_type="application/json")
        try:
            if self.first_delay_s:
                await asyncio.sleep(self.first_delay_s)
            if body.get("stream"):
                return await self._stream(request, body, mode)
            await asyncio.sleep(self.chunk_delay_s * self.chunks)
            self.completed += 1
            return web.json_response(self._full(body), headers=self.response_headers)
        except (asyncio.CancelledError, ConnectionResetError):
            self.aborted.append((rid, time.monotonic()))
            raise

    def _full(self, body: dict[str, Any]) -> dict[str, Any]:
        tokens = self.chunks * self.tokens_per_chunk
        text = "tok " * tokens
        chat = "messages" in body
        choice: dict[str, Any] = ({"index": 0, "message": {"role": "assistant", "content": text},
                                   "finish_reason": "length"} if chat else
                                  {"index": 0, "text": text, "finish_reason": "length"})
        return {"id": "cmpl-1", "object": "chat.completion" if chat else "text_completion", "model": self.model,
                "choices": [choice], "usage": {"prompt_tokens": 3, "completion_tokens": tokens,
                                               "total_tokens": tokens + 3}}

    async def _stream(self, request: web.Request, body: dict[str, Any], mode: str) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", **self.response_headers})
        await resp.prepare(request)
        chat = "messages" in body
        if mode == "garbage":
            await resp.write(b"data: {not json\n\n\x00\x01garbage")
            return resp
        if chat:
            await resp.write(b'data: ' + json.dumps({"object": "chat.completion.chunk", "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]}).encode()
                + b"\n\n")
        for i in range(self.chunks):
            if mode == "truncate" and i == self.chunks // 2:
                request.transport.close()  # type: ignore[union-attr]
                return resp
            await asyncio.sleep(self.chunk_delay_s)
            text = "tok " * self.tokens_per_chunk
            done = i == self.chunks - 1
            choice = ({"index": 0, "delta": {"content": text}, "finish_reason": "length" if done else None}
                      if chat else {"index": 0, "text": text, "finish_reason": "length" if done else None})
            await resp.write(b"data: " + json.dumps({"choices": [choice]}).encode() + b"\n\n")
        options = body.get("stream_options") or {}
        if options.get("include_usage"):
            tokens = self.chunks * self.tokens_per_chunk
            usage = {"prompt_tokens": 3, "completion_tokens": tokens, "total_tokens": tokens + 3}
            await resp.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        self.completed += 1
        await resp.write_eof()
        return resp


B = TypeVar("B", bound=FakeBackend)


@contextlib.asynccontextmanager
async def started_pair(kind: type[B]) -> AsyncIterator[tuple[B, B]]:
    """A baseline and a speculative fake of `kind` (three tokens a chunk), started, and stopped after."""
    base, spec = kind(), kind(spec=True, tokens_per_chunk=3)
    await base.start()
    await spec.start()
    try:
        yield base, spec
    finally:
        await base.stop()
        await spec.stop()


class FakeProcess:
    """A FakeBackend in its own process (`python tests/fakes.py`), for tests that kill a backend."""

    def __init__(self, *args: str) -> None:
        self.args = args
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def start(self) -> str:
        import sys

        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, *self.args, stdout=asyncio.subprocess.PIPE, start_new_session=True)
        assert self.proc.stdout is not None
        line = await asyncio.wait_for(self.proc.stdout.readline(), 20)
        self.url = line.decode().strip()
        return self.url

    async def control(self, **changes: Any) -> dict[str, Any]:
        import aiohttp

        async with aiohttp.ClientSession() as session, session.post(self.url + "/_fault", json=changes) as r:
            return dict(await r.json())

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


async def _serve_forever(argv: list[str] | None = None) -> None:
    """Run one FakeBackend as a real process (fault tests kill it): prints its URL on stdout.

    `POST /_fault {"mode": ..., "chunks": ..., "chunk_delay_s": ...}` changes its behaviour at run time.
    """
    import argparse
    import sys

    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--chunk-delay-s", type=float, default=0.0)
    parser.add_argument("--spec", action="store_true")
    args = parser.parse_args(argv)
    fake = FakeBackend(mode=args.mode, chunks=args.chunks, chunk_delay_s=args.chunk_delay_s, spec=args.spec)

    async def control(request: web.Request) -> web.Response:
        for name, value in (await request.json()).items():
            setattr(fake, name, value)
        return web.json_response({"mode": fake.mode, "calls": fake.calls, "completed": fake.completed,
                                  "aborted": len(fake.aborted)})

    app = fake.app()
    app.router.add_post("/_fault", control)
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    sys.stdout.write(f"http://127.0.0.1:{port}\n")
    sys.stdout.flush()
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(_serve_forever())


FakePair = tuple[FakeBackend, FakeBackend]  # the `fakes` fixture: a baseline and a speculative fake
