"""The client side of a movable stream (`gateway.migrate`): whole SSE events only, each passed through the joiner
(`gateway.core.migration.StreamJoin`), so the client has exactly the text a resume starts from. Bounded: an event
larger than `JOIN_EVENT_MAX` turns the rest of the stream into a plain relay (it no longer moves), and what it holds
never exceeds `SPECGATE_MAX_RESPONSE_BYTES`."""

from __future__ import annotations

from collections.abc import Callable

import orjson
from aiohttp import web

from gateway.core.migration import StreamJoin
from gateway.streaming import SseTap, event_data
from gateway.upstream import ResponseTooLarge

JOIN_EVENT_MAX = 64 * 1024  # the most of one SSE event the joiner holds before relaying the stream unjoined


class Stopped(Exception):
    """The joiner cut the answer at a stop string that straddles a seam: the upstream is no longer read."""


class JoinRelay:
    """The client side of a movable stream: whole events only, each passed through the joiner (a `relay.Sink`)."""

    def __init__(self, out: web.StreamResponse | None, join: StreamJoin, limit: int) -> None:
        """`out` None: a non-streamed request's parts, joined and not written anywhere. `limit`: the most it holds,
        half an event and the text so far together (`SPECGATE_MAX_RESPONSE_BYTES`)."""
        self.out, self.last_out, self.limit = out, b"\n\n", limit
        self.join = join
        self.buf = bytearray()
        self.done = False
        self.watch: Callable[[], None] | None = None  # called after each upstream event (mid-stream moves)
        self.passthrough: SseTap | None = None  # an event too large to hold: the rest relayed as it comes, unjoined

    @property
    def completion_tokens(self) -> int:
        tap = self.passthrough
        joined = self.join.completion_tokens
        return joined if tap is None else max(tap.completion_tokens or 0, joined)

    @property
    def steps(self) -> int:
        return self.join.steps + (0 if self.passthrough is None else self.passthrough.engine_steps)

    async def send(self, chunk: bytes) -> None:
        if self.passthrough is not None:
            await self._pass(chunk)
            return
        self.buf += chunk
        if len(self.buf) + len(self.join.text) > self.limit:  # an endless event or answer: never held unbounded
            raise ResponseTooLarge(f"upstream answer exceeds {self.limit} bytes")
        end = self.buf.rfind(b"\n\n")
        if end < 0:
            if len(self.buf) > JOIN_EVENT_MAX and self.out is not None and self.join.part == 0:
                # one event this large (vLLM's are ~0.2-1 KB): relayed as it comes, as a stream that cannot move;
                # `finished` keeps it out of a move's candidates (`Migrator._candidates`)
                self.passthrough = SseTap(strip_usage=not self.join.client_usage, chat=self.join.chat)
                self.join.finished = True
                held = bytes(self.buf)
                self.buf.clear()
                await self._pass(held)
            return
        whole = bytes(self.buf[:end + 2])
        del self.buf[:end + 2]
        out: list[bytes] = []
        for event in whole.split(b"\n\n"):
            data = event_data(event)
            if not data:
                continue
            if data == b"[DONE]":
                self.done = True
                out.append(b"data: [DONE]\n\n")
                continue
            try:
                obj = orjson.loads(data)
            except orjson.JSONDecodeError:
                obj = None
            if not isinstance(obj, dict):  # not an event object (`data: 42`): relayed as it came, not joined
                out.append(event + b"\n\n")
                continue
            out.extend(b"data: " + orjson.dumps(o) + b"\n\n" for o in self.join.event(obj))
            if self.watch is not None:
                self.watch()
        if out:
            await self._write(b"".join(out))
        if self.join.stopped is not None:
            raise Stopped

    async def _pass(self, chunk: bytes) -> None:
        assert self.passthrough is not None
        data = self.passthrough.feed(chunk)
        self.done = self.passthrough.done
        if data:
            await self._write(data)

    async def _write(self, data: bytes) -> None:
        if self.out is None:
            return
        await self.out.write(data)
        self.last_out = data

    async def close_cut(self) -> None:
        """The answer was cut at a stop: the usage the client asked for, then [DONE]."""
        tail = b"".join(b"data: " + orjson.dumps(o) + b"\n\n" for o in self.join.closing())
        await self._write(tail + b"data: [DONE]\n\n")
