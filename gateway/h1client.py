"""A lean HTTP/1.1 client for the completion path: kept-alive connections per backend, parsed by httptools.

Why not aiohttp's `ClientSession` here: on this path it cost ~200 µs of CPU a request, the largest single cost
of a plain request through the gateway; this client costs ~70 µs for the same exchange (side by side:
`python -m gateway.bench.overhead.client_bench`; `results/overhead-2026-12-04-f/`). It does only
what the gateway needs:

- one request (`POST` with a body; `GET` for health checks and scrapes), to a backend's base URL (http or https,
  a path prefix allowed);
- the status and headers as soon as they arrive, then the body whole (`read`) or chunk by chunk (`readany`), with
  back-pressure: reading from the socket pauses while more than `HIGH_WATER` bytes wait for the reader;
- gzip and deflate answers decoded (we ask for identity; a backend that compresses anyway is decoded, not relayed
  undecodable); any other encoding is a protocol error;
- a total timeout per exchange, raised as `TimeoutError` in the reader;
- a connection goes back to the pool only when its response ended cleanly and both sides keep it alive; a response
  closed early closes its connection, so vLLM sees the client leave and aborts the request;
- a reused connection the backend had closed while idle (a keep-alive race) is retried once on a fresh one.

`/v1/models`, the admin pass-throughs and the peers' warm start keep aiohttp's session: they are not per request.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
import time
from collections import deque
from dataclasses import dataclass

from yarl import URL

from gateway.h1conn import (
    Connection,
    ResponseTooLarge,
    UpstreamConnectError,
    UpstreamDisconnected,
    UpstreamError,
    UpstreamProtocolError,
    UpstreamResponse,
)

__all__ = ["Origin", "ResponseTooLarge", "UpstreamClient", "UpstreamConnectError", "UpstreamDisconnected",
           "UpstreamError", "UpstreamProtocolError", "UpstreamResponse", "origin_of", "request_head"]


@dataclass(frozen=True, slots=True)
class Origin:
    host: str
    port: int
    tls: bool
    prefix: str  # the base URL's path, without a trailing slash
    host_header: str


def origin_of(base_url: str) -> Origin:
    url = URL(base_url)
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError(f"not an http(s) URL: {base_url!r}")
    port = url.port or (443 if url.scheme == "https" else 80)
    host = url.host
    shown = f"[{host}]" if ":" in host else host
    host_header = shown if url.is_default_port() else f"{shown}:{port}"
    return Origin(host, port, url.scheme == "https", url.path.rstrip("/"), host_header)


class UpstreamClient:
    """Kept-alive HTTP/1.1 connections to the backends, at most `limit_per_origin` open to each (0: no limit); a
    connection idle for `keepalive_s` is closed when the pool next looks at it (as aiohttp's connector does after
    15 s: a burst must not leave its connections open for good)."""

    def __init__(self, *, limit_per_origin: int, connect_timeout_s: float, total_timeout_s: float,
                 keepalive_s: float = 15.0, ssl_context: ssl.SSLContext | None = None) -> None:
        self.limit = limit_per_origin
        self.keepalive_s = keepalive_s
        self.connect_timeout_s, self.total_timeout_s = connect_timeout_s, total_timeout_s
        self._ssl = ssl_context
        self._origins: dict[str, Origin] = {}
        self._idle: dict[Origin, list[Connection]] = {}
        self._open: dict[Origin, set[Connection]] = {}
        self._count: dict[Origin, int] = {}  # open and opening, per origin (the limit)
        self._waiters: dict[Origin, deque[asyncio.Future[None]]] = {}
        self.closed = False

    def in_use(self) -> int:
        """Connections carrying an exchange now (a leak shows here)."""
        return sum(len(open_) for open_ in self._open.values()) - self.idle()

    def idle(self) -> int:
        return sum(len(idle) for idle in self._idle.values())

    def waiting(self) -> int:
        """Requests waiting for a connection at the per-backend limit."""
        return sum(len(waiters) for waiters in self._waiters.values())

    async def post(self, base_url: str, path: str, body: bytes, headers: dict[str, str]) -> UpstreamResponse:
        """Send a completion request; return once the answer's status and headers have arrived."""
        return await self.request("POST", base_url, path, body, headers)

    async def request(self, method: str, base_url: str, path: str, body: bytes, headers: dict[str, str],
                      timeout_s: float | None = None) -> UpstreamResponse:
        """Send a request; return once the answer's status and headers have arrived. `timeout_s` (default: the
        client's total timeout) bounds the whole exchange, the body's reading included."""
        if self.closed:
            raise UpstreamConnectError("client closed")
        origin = self._origins.get(base_url)
        if origin is None:
            origin = origin_of(base_url)
            if len(self._origins) < 4096:  # the pool's backends: never grows with what clients send
                self._origins[base_url] = origin
        head = request_head(origin, path, len(body), headers, method)
        timeout = self.total_timeout_s if timeout_s is None else timeout_s
        conn, reused = await self._connection(origin)
        try:
            return await self._exchange(conn, head, body, timeout)
        except UpstreamDisconnected as exc:
            if not (reused and exc.before_response):
                raise
        # the backend had closed the kept-alive connection as we sent on it: once more, on a new one
        conn, _ = await self._connection(origin, fresh=True)
        return await self._exchange(conn, head, body, timeout)

    async def _exchange(self, conn: Connection, head: bytes, body: bytes, timeout_s: float) -> UpstreamResponse:
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        resp = conn.response = UpstreamResponse(conn, ready)
        resp._timer = loop.call_later(timeout_s, resp._timed_out)
        assert conn.transport is not None
        try:
            if conn.closed:  # lost between the pool and here
                raise UpstreamDisconnected("upstream closed the connection", before_response=True)
            if len(body) < 1 << 16:
                conn.transport.write(head + body)
            else:
                conn.transport.writelines((head, body))
            await ready
        except BaseException:
            resp.close()
            raise
        return resp

    async def _connection(self, origin: Origin, fresh: bool = False) -> tuple[Connection, bool]:
        while True:
            idle = self._idle.get(origin)
            while idle and not fresh:
                conn = idle.pop()
                if conn.closed:
                    continue
                if conn.idle_since < time.monotonic() - self.keepalive_s:
                    conn.abort()
                    continue
                return conn, True
            count = self._count.get(origin, 0)
            if not self.limit or count < self.limit:
                break
            if idle:  # at the limit, a fresh one asked for: make room
                idle.pop().abort()
                continue
            waiter = asyncio.get_running_loop().create_future()
            waiters = self._waiters.setdefault(origin, deque())
            waiters.append(waiter)
            try:
                await waiter
            finally:
                with contextlib.suppress(ValueError):
                    waiters.remove(waiter)
        self._count[origin] = self._count.get(origin, 0) + 1
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                _, conn = await loop.create_connection(
                    lambda: Connection(self, origin), origin.host, origin.port,
                    ssl=self._tls() if origin.tls else None, server_hostname=origin.host if origin.tls else None)
        except BaseException as exc:
            self._count[origin] -= 1
            self._wake_one(origin)
            if isinstance(exc, TimeoutError):
                raise UpstreamConnectError(f"connect to {origin.host}:{origin.port} timed out") from None
            if isinstance(exc, OSError):
                raise UpstreamConnectError(f"cannot connect to {origin.host}:{origin.port}: {exc}") from None
            raise
        self._open.setdefault(origin, set()).add(conn)
        if self.closed or conn.closed:
            conn.abort()
            raise UpstreamConnectError("connection closed as it opened")
        return conn, False

    def _tls(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
        return self._ssl

    def _release(self, conn: Connection) -> None:
        if self.closed:
            conn.abort()
            return
        idle = self._idle.setdefault(conn.origin, [])
        conn.idle_since = now = time.monotonic()
        if idle and idle[0].idle_since < now - self.keepalive_s:  # the oldest, gone stale: one per release
            idle[0].abort()  # (`_forget` takes it out of the list)
        idle.append(conn)
        self._wake_one(conn.origin)

    def _forget(self, conn: Connection) -> None:
        """`conn` is closed: out of the pool, and its place under the limit free for a waiter."""
        if not conn.counted:
            return
        conn.counted = False
        origin = conn.origin
        self._count[origin] = self._count.get(origin, 1) - 1
        self._open.get(origin, set()).discard(conn)
        idle = self._idle.get(origin)
        if idle and conn in idle:
            idle.remove(conn)
        self._wake_one(origin)

    def _wake_one(self, origin: Origin) -> None:
        waiters = self._waiters.get(origin)
        while waiters:
            waiter = waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    async def close(self) -> None:
        self.closed = True
        for open_ in list(self._open.values()):
            for conn in list(open_):
                conn.abort()
        self._idle.clear()


def request_head(origin: Origin, path: str, length: int, headers: dict[str, str], method: str = "POST") -> bytes:
    """The request line and headers (no `Content-Length` on a GET without a body). A name or value with a line
    break in it is refused: it would split a header (the server side's parser already refuses them in what
    clients send). A client's header bytes that were not UTF-8 (aiohttp decodes them with `surrogateescape`) are
    sent as they came."""
    sized = method != "GET" or length > 0
    text = "".join([f"{method} {origin.prefix}{path} HTTP/1.1\r\nHost: {origin.host_header}\r\n",
                    f"Content-Length: {length}\r\n" if sized else "",
                    *[f"{k}: {v}\r\n" for k, v in headers.items()], "\r\n"])
    lines = len(headers) + 3 + sized
    if text.count("\n") != lines or text.count("\r") != lines:
        raise ValueError("a header name or value contains a line break")
    return text.encode("utf-8", "surrogateescape")  # bytes that were not UTF-8 go on as they came
