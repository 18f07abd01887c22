"""The upstream sessions' connector: aiohttp's `TCPConnector` with three fixes it lacks (3.14), each guarded by a
case of `tests/test_upstream_conformance.py` that fails without it:

- a waiter for a connection at the per-backend limit that is woken and cancelled in the same iteration (its
  connect budget ran out, its client left) passes the wake-up on; aiohttp drops it, and the next waiter then
  waits with a connection free until its own timeout;
- a pooled connection that received bytes while idle is closed, not reused: aiohttp keeps them and reads them as
  the next request's answer (a backend could answer one client's request with another's bytes);
- an answer whose body stops parsing (a chunk not followed by CRLF) fails its reader: aiohttp's C parser records
  the error on the connection only, and the reader waited for the total timeout (900 s) with the socket closed.

It also tells the client whether a request went out on a pooled connection (`REUSED`). The fixes override private
parts of aiohttp's connector (`_wait_for_available_connection`, `_get`, `_factory`) and its protocol's
`set_exception`; the version is bounded in pyproject.toml, and the tests fail if a new aiohttp stops calling them.
Not compiled: a mypyc class cannot subclass an interpreted one.
"""

from __future__ import annotations

import asyncio
import functools
from contextvars import ContextVar
from typing import Any, cast

import aiohttp
from aiohttp.client_proto import ResponseHandler

# Set when the connector hands the current task a pooled connection: the keep-alive race (a backend closing an
# idle connection as a request goes out on it) can only happen then, so only then is a drop retried.
REUSED: ContextVar[bool] = ContextVar("specgate_upstream_reused", default=False)


class _Handler(ResponseHandler):
    def set_exception(self, exc: BaseException, *cause: BaseException) -> None:
        payload = self._payload
        super().set_exception(exc, *cause)
        if payload is not None and not payload.is_eof() and payload.exception() is None:
            payload.set_exception(aiohttp.ClientPayloadError(f"bad upstream answer: {exc!r}"[:300]), exc)


class Connector(aiohttp.TCPConnector):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._factory = cast("functools.partial[ResponseHandler]", functools.partial(_Handler, loop=self._loop))

    async def _wait_for_available_connection(self, key: Any, traces: list[Any]) -> None:
        try:
            await super()._wait_for_available_connection(key, traces)
        except asyncio.CancelledError:
            self._release_waiter()  # wakes the next waiter if a connection is free; spurious wakes loop in aiohttp
            raise

    async def _get(self, key: Any, traces: list[Any]) -> aiohttp.connector.Connection | None:
        while (conn := await super()._get(key, traces)) is not None:
            protocol = conn.protocol
            if protocol is None or not protocol.should_close:
                REUSED.set(True)
                return conn
            conn.close()  # bytes arrived while it was idle (or it is otherwise unfit): never reused
        return None
