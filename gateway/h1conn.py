"""One kept-alive HTTP/1.1 connection (an asyncio protocol fed to httptools' parser) and the answer it carries.

The answer is read whole (`read`) or as it arrives (`readany`), with back-pressure: reading from the socket pauses
while more than `HIGH_WATER` bytes wait for the reader. See `gateway.h1client` for the pool and why this exists.
"""

from __future__ import annotations

import asyncio
import zlib
from collections import deque
from typing import TYPE_CHECKING, cast

import httptools
from multidict import CIMultiDict, CIMultiDictProxy

if TYPE_CHECKING:
    from gateway.h1client import Origin, UpstreamClient

HIGH_WATER = 1 << 16  # bytes waiting for the reader before reading from the socket pauses ...
LOW_WATER = 1 << 14  # ... and resumes once the reader has brought them under this


class UpstreamError(Exception):
    """The exchange failed on the wire; the subclasses say how."""


class UpstreamConnectError(UpstreamError):
    """No connection could be opened."""


class UpstreamDisconnected(UpstreamError):
    """The backend closed the connection before its answer ended."""

    def __init__(self, message: str, *, before_response: bool) -> None:
        super().__init__(message)
        self.before_response = before_response  # nothing of an answer had arrived


class UpstreamProtocolError(UpstreamError):
    """An answer that cannot be parsed or decoded."""


class ResponseTooLarge(Exception):
    """An upstream answer over the size limit."""


_NO_HEADERS: CIMultiDictProxy[str] = CIMultiDictProxy(CIMultiDict())


class UpstreamResponse:
    """One answer: `status` and `headers` once it started, then its body."""

    __slots__ = ("_buffered", "_chunks", "_conn", "_decoder", "_done", "_error", "_keep_alive", "_raw_headers",
                 "_ready", "_started", "_timer", "_waiter", "content_length", "headers", "status")

    def __init__(self, conn: Connection, ready: asyncio.Future[None]) -> None:
        self.status = 0
        self.headers: CIMultiDictProxy[str] = _NO_HEADERS
        self.content_length: int | None = None
        self._conn: Connection | None = conn
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._waiter: asyncio.Future[None] | None = None
        self._ready: asyncio.Future[None] | None = ready  # resolved when the status and headers are in
        self._error: BaseException | None = None
        self._done = False  # the whole answer has arrived
        self._raw_headers: list[tuple[bytes, bytes]] = []
        self._decoder: zlib._Decompress | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._keep_alive = False
        self._started = False  # a byte of the answer arrived

    # --- the reader's side
    async def readany(self) -> bytes:
        """What has arrived since the last call (waiting for something), or b"" at the end of the answer."""
        while not self._chunks:
            if self._error is not None:
                raise self._error
            if self._done:
                return b""
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            await waiter
        chunks = self._chunks
        data = chunks.popleft() if len(chunks) == 1 else b"".join([chunks.popleft() for _ in range(len(chunks))])
        self._buffered -= len(data)
        conn = self._conn
        if conn is not None and conn.paused and self._buffered < LOW_WATER:
            conn.resume()
        return data

    async def read(self, limit: int) -> bytes:
        """The whole body, or `ResponseTooLarge` as soon as it passes `limit` bytes (decoded)."""
        if self.content_length is not None and self.content_length > limit and self._decoder is None:
            raise ResponseTooLarge(f"upstream answer of {self.content_length} bytes exceeds {limit}")
        parts, size = [], 0
        while chunk := await self.readany():
            parts.append(chunk)
            size += len(chunk)
            if size > limit:
                raise ResponseTooLarge(f"upstream answer exceeds {limit} bytes")
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        """Done with the answer: its connection goes back to the pool if the answer ended cleanly and both sides
        keep it alive, else it is closed (the backend sees the client leave, and vLLM aborts the request)."""
        self._cancel_timer()
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if self._done and self._error is None and self._keep_alive:
            conn.release()
        else:
            if self._error is None and not self._done:
                self._error = UpstreamDisconnected("answer closed before its end", before_response=not self._started)
            conn.abort()

    # --- the connection's side
    def _wake(self) -> None:
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _headers_in(self) -> None:
        ready, self._ready = self._ready, None
        if ready is not None and not ready.done():
            ready.set_result(None)

    def _fail(self, error: BaseException) -> None:
        if self._error is None and not self._done:
            self._error = error
        self._cancel_timer()
        ready, self._ready = self._ready, None
        if ready is not None and not ready.done():
            ready.set_exception(error)
        self._wake()

    def _feed(self, data: bytes) -> None:
        if self._decoder is not None:
            try:
                data = self._decoder.decompress(data)
            except zlib.error as exc:
                self._fail(UpstreamProtocolError(f"undecodable answer: {exc}"))
                if self._conn is not None:
                    self._conn.abort()
                return
            if not data:
                return
        self._chunks.append(data)
        self._buffered += len(data)
        conn = self._conn
        if self._buffered > HIGH_WATER and conn is not None and not conn.paused:
            conn.pause()
        self._wake()

    def _finish(self) -> None:
        if self._decoder is not None:
            rest = self._decoder.flush()
            if rest:
                self._chunks.append(rest)
                self._buffered += len(rest)
        self._done = True
        self._cancel_timer()
        self._wake()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _timed_out(self) -> None:
        self._timer = None
        self._fail(TimeoutError("upstream exceeded the total timeout"))
        if self._conn is not None:
            self._conn.abort()



class Connection(asyncio.Protocol):
    """One kept-alive connection to an origin, carrying one exchange at a time."""

    def __init__(self, client: UpstreamClient, origin: Origin) -> None:
        self.client, self.origin = client, origin
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.response: UpstreamResponse | None = None
        self.closed = False  # aborted by us or lost
        self.counted = True  # in the client's count of open connections to the origin
        self.idle_since = 0.0  # monotonic time it went back to the pool
        self.paused = False

    # --- asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's transports are not asyncio's subclasses

    def data_received(self, data: bytes) -> None:
        resp = self.response
        if resp is None or resp._done:  # bytes nobody asked for: not safe to reuse
            self.abort()
            return
        resp._started = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._broken(UpstreamProtocolError(f"bad upstream answer: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.client._forget(self)
        resp = self.response
        if resp is None or resp._done:
            return
        if resp.status and resp.content_length is None and "chunked" not in resp.headers.get("Transfer-Encoding", ""):
            resp._finish()  # an answer delimited by the end of the connection (HTTP/1.0 style)
            return
        resp._fail(UpstreamDisconnected("upstream closed the connection" + (f": {exc}" if exc else ""),
                                        before_response=not resp._started))

    # --- httptools callbacks
    def on_header(self, name: bytes, value: bytes) -> None:
        if self.response is not None:
            self.response._raw_headers.append((name, value))

    def on_headers_complete(self) -> None:
        resp = self.response
        assert resp is not None
        status = self.parser.get_status_code()
        if status < 200:  # an interim answer (100 Continue): the real one follows
            resp._raw_headers.clear()
            return
        if resp.status:  # a second answer on one exchange
            self._broken(UpstreamProtocolError("upstream sent a second answer"))
            return
        resp.status = status
        headers: CIMultiDict[str] = CIMultiDict()
        for name, value in resp._raw_headers:
            headers.add(name.decode("latin-1"), value.decode("utf-8", "replace"))
        resp.headers = CIMultiDictProxy(headers)
        length = headers.get("Content-Length")
        resp.content_length = int(length) if length is not None and length.isdigit() else None
        resp._keep_alive = self.parser.should_keep_alive()
        encoding = headers.get("Content-Encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            resp._decoder = zlib.decompressobj(wbits=47)  # gzip or zlib, told apart by their header
        elif encoding != "identity":
            self._broken(UpstreamProtocolError(f"upstream answered with an unsupported encoding: {encoding}"))
            return
        resp._headers_in()

    def on_body(self, body: bytes) -> None:
        if self.response is not None:
            self.response._feed(body)

    def on_message_complete(self) -> None:
        resp = self.response
        if resp is not None and resp.status:
            resp._finish()

    # --- used by the client and the response
    def _broken(self, error: BaseException) -> None:
        if self.response is not None:
            self.response._fail(error)
        self.abort()

    def pause(self) -> None:
        if self.transport is not None and not self.closed:
            self.paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self.transport is not None and not self.closed and self.paused:
            self.paused = False
            self.transport.resume_reading()

    def abort(self) -> None:
        if not self.closed:
            self.closed = True
            if self.transport is not None:
                self.transport.abort()
            self.client._forget(self)

    def release(self) -> None:
        self.response = None
        if self.closed:
            return
        self.resume()  # an idle connection must see the backend close it
        self.client._release(self)


