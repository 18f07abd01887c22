"""Reading a client's completion request: the body under a read timeout, parsed off the event loop when large.

Parsing and validating a body is proportional to its structure: 8 MB of `{}` messages is ~1 s of CPU.
Bodies of at least `offload_parse_bytes` are parsed in one helper process (started on first use), so
such a request costs its sender the time, never the other requests on the loop.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from aiohttp import web

from gateway.core.protocol import RequestTimeout, RequestView, prepare
from gateway.settings import Settings


class Intake:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._pool: ProcessPoolExecutor | None = None

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
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._pool, prepare, endpoint, raw)
        except BrokenProcessPool:  # the helper died (killed, out of memory): a new one next time
            self._pool = None
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
