"""Emulated servers started together and stopped together, as an async context manager."""

from __future__ import annotations

from types import TracebackType
from typing import Self

from aiohttp import web


class Served:
    """A subclass starts its aiohttp apps in `start` and appends their runners to `_runners`; `stop` (and
    leaving the `async with`) cleans them up, last started first."""

    _runners: list[web.AppRunner]

    async def start(self) -> None:
        raise NotImplementedError

    async def stop(self) -> None:
        while self._runners:
            await self._runners.pop().cleanup()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()
