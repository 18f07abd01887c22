"""Reading a client's completion request: the body under a read timeout, parsed off the event loop when large.

Parsing and validating a body is proportional to its structure: 8 MB of `{}` messages is ~1 s of CPU.
Bodies under `offload_parse_bytes` are parsed on the loop (well under a millisecond for real requests). Larger
ones go to a helper process (started on first use), in one of two lanes, each with its own helper: bodies of
at least `offload_large_parse_bytes` in one, the rest in the other, so a few huge bodies never hold up a
legitimate medium one (a 300 KB request took 3.6 s behind four 8 MiB bodies with one shared helper). Each lane
holds at most `parse_queue_bytes` of bodies waiting for or in its helper; a body beyond that is answered 503
(`ParseQueueFull`, OpenAI-shaped, retryable) rather than queued without bound.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import ClassVar

from aiohttp import web

from gateway.core.protocol import GatewayError, RequestTimeout, RequestView, prepare
from gateway.settings import Settings


class ParseQueueFull(GatewayError):
    status: ClassVar[int] = 503
    type: ClassVar[str] = "server_error"
    default_code: ClassVar[str | None] = "parse_queue_full"


class Lane:
    """One helper process and the bodies waiting for it, at most `limit_bytes` of them (one is always let in)."""

    def __init__(self, name: str, limit_bytes: int) -> None:
        self.name, self.limit_bytes = name, limit_bytes
        self.queued_bytes = 0
        self.queued = 0
        self._pool: ProcessPoolExecutor | None = None

    async def prepare(self, endpoint: str, raw: bytes) -> tuple[RequestView, bytes | None]:
        if self.queued and self.queued_bytes + len(raw) > self.limit_bytes:
            raise ParseQueueFull(f"The gateway is busy parsing {self.queued} other large requests; retry shortly.")
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        self.queued += 1
        self.queued_bytes += len(raw)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, prepare, endpoint, raw)
        except BrokenProcessPool:  # the helper died (killed, out of memory): a new one next time
            self._pool = None
            raise
        finally:
            self.queued -= 1
            self.queued_bytes -= len(raw)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


class Intake:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.medium = Lane("medium", settings.parse_queue_bytes)
        self.large = Lane("large", settings.parse_queue_bytes)

    async def read(self, request: web.Request) -> bytes:
        if request.content.is_eof():  # the whole body came with the headers (the common case): no timer to arm
            return await request.read()
        try:
            async with asyncio.timeout(self.settings.body_timeout_s):
                return await request.read()
        except TimeoutError:
            raise RequestTimeout(f"Request body not received within {self.settings.body_timeout_s} s.") from None

    async def prepare(self, endpoint: str, raw: bytes) -> tuple[RequestView, bytes | None]:
        limit = self.settings.offload_parse_bytes
        if not limit or len(raw) < limit:
            return prepare(endpoint, raw)
        lane = self.large if len(raw) >= self.settings.offload_large_parse_bytes else self.medium
        return await lane.prepare(endpoint, raw)

    def close(self) -> None:
        self.medium.close()
        self.large.close()
