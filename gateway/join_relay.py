"""The client side of a movable stream (`gateway.migrate`): whole SSE events only, each passed through the joiner
(`gateway.core.migration.StreamJoin`), so the client has exactly the text a resume starts from. Bounded: an event
larger than `JOIN_EVENT_MAX` is relayed as it arrives, unjoined, and the stream no longer moves (the events after it
are joined again, so the usage the client did not ask for is still removed); what it holds never exceeds
`SPECGATE_MAX_RESPONSE_BYTES`."""

from __future__ import annotations

from collections.abc import Callable

import orjson
from aiohttp import web

from gateway.core.migration import StreamJoin
from gateway.streaming import event_data
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
        self.raw = False  # inside an event too large to hold: relayed as it comes, unjoined, to its blank line
        self.raw_nl = False  # ... whose last byte so far is `\n` (the blank line may span two chunks)

    async def send(self, chunk: bytes) -> None:
        if self.raw and not (chunk := await self._raw(chunk)):
            return
        self.buf += chunk
        if len(self.buf) + len(self.join.text) > self.limit:  # an endless event or answer: never held unbounded
            raise ResponseTooLarge(f"upstream answer exceeds {self.limit} bytes")
        end = self.buf.rfind(b"\n\n")
        if end < 0:
            if len(self.buf) > JOIN_EVENT_MAX and self.out is not None and self.join.part == 0:
                # one event this large (vLLM's are ~0.2-1 KB): relayed as it comes, and the stream cannot move any
                # more (`finished` keeps it out of a move's candidates, `Migrator._candidates`)
                self.join.finished, self.raw = True, True
                held = bytes(self.buf)
                self.buf.clear()
                await self._raw(held)
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

    async def _raw(self, chunk: bytes) -> bytes:
        """Relay the large event's bytes in `chunk` up to its blank line; what follows it (b"" when it goes on)."""
        if self.raw_nl and chunk[:1] == b"\n":
            end = 1
        elif (found := chunk.find(b"\n\n")) >= 0:
            end = found + 2
        else:
            self.raw_nl = chunk.endswith(b"\n")
            await self._write(chunk)
            return b""
        self.raw = self.raw_nl = False
        await self._write(chunk[:end])
        return chunk[end:]

    async def _write(self, data: bytes) -> None:
        if self.out is None:
            return
        await self.out.write(data)
        self.last_out = data

    async def close_cut(self) -> None:
        """The answer was cut at a stop: the usage the client asked for, then [DONE]."""
        tail = b"".join(b"data: " + orjson.dumps(o) + b"\n\n" for o in self.join.closing())
        await self._write(tail + b"data: [DONE]\n\n")
