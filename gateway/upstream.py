"""The upstream clients (aiohttp's `ClientSession`), header filtering and the translation of client errors.

Four sessions, each with its own connector, so that none waits on another's connections: completions
(`UpstreamClient`), health checks and `/metrics` scrapes (`probe_session`, one each), and one for pass-throughs,
`/v1/models` and the peers' warm start (`create_session`). Every one keeps aiohttp's caps on what an upstream may
send (`HEADER_CAPS`: 128 header lines of at most 8 KiB), follows no redirect, decodes gzip/deflate a bounded piece
at a time (the reader's back-pressure holds decompression too) and reuses a connection only after its answer ended
cleanly (aiohttp closes one with bytes left over or an answer cut short; `gateway.connector` one that received
bytes while idle). Why not our own client: docs/choices.md.

Client exceptions never leave this module's callers: they are mapped to an `UpstreamFailure` with a
short reason (`connect`, `timeout`, `status_5xx`, `protocol`), which the proxy fails over on.
"""

from __future__ import annotations

import base64
import os
import re
from typing import Any

import aiohttp
from aiohttp.compression_utils import HAS_BROTLI, HAS_ZSTD
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from gateway.connector import REUSED, Connector
from gateway.settings import Settings

# aiohttp's own defaults, stated: an upstream's header block is at most ~1 MiB, refused as it arrives.
HEADER_CAPS: dict[str, Any] = {"max_line_size": 8190, "max_field_size": 8190, "max_headers": 128}
READ_BUFSIZE = 1 << 16  # bytes a reader may leave unread before reading from the socket pauses (2x, aiohttp)
KEEPALIVE_S = 15.0  # an idle pooled connection is closed after this
# encodings aiohttp decodes; an answer in any other is a protocol error (it would reach the client undecodable)
DECODED = frozenset({"", "identity", "gzip", "deflate"} | ({"br"} if HAS_BROTLI else set())
                    | ({"zstd"} if HAS_ZSTD else set()))

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "proxy-connection",
})
# The body sent upstream is the decoded one (aiohttp inflates a gzip request), so its encoding goes too.
_DROP_REQUEST = HOP_BY_HOP | {"host", "content-length", "authorization", "accept-encoding", "x-api-key",
                              "content-encoding"}
# Upstream answers are decoded by the session (auto_decompress), so no encoding is relayed either.
_DROP_RESPONSE = HOP_BY_HOP | {"content-length", "content-encoding", "server", "date", "location"}
RETRY_STATUSES = frozenset({500, 502, 503, 504})
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:@/+=-]{1,128}")


class UpstreamFailure(Exception):
    """A failed attempt before the first byte (so failover is allowed); `reason` is a metric label."""

    def __init__(self, reason: str, message: str, *, status: int | None = None, suspect: bool = False,
                 blameless: bool = False, timed_out: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status
        # True when the request itself may be the cause (a 5xx answer, a timeout after it was sent):
        # the backend is blamed only if another backend then serves the same request.
        self.suspect = suspect
        self.blameless = blameless  # the gateway's own doing (a move that could not resume): tried again, no blame
        self.timed_out = timed_out  # a deadline passed: a stall of the gateway's own loop may be why (`excuse_stall`)


class StatusFailure(UpstreamFailure):
    """A retryable upstream status (5xx); kept so the last one can be passed through to the client."""

    def __init__(self, status: int, body: bytes, headers: CIMultiDictProxy[str]) -> None:
        super().__init__("status_5xx", f"upstream answered {status}", status=status, suspect=True)
        self.body = body
        self.headers = headers


class ResponseTooLarge(Exception):
    """An upstream answer over the size limit."""


def _connector(limit_per_host: int, ssl_context: Any = True, keepalive_s: float = KEEPALIVE_S) -> Connector:
    return Connector(limit=0, limit_per_host=limit_per_host, ttl_dns_cache=300, keepalive_timeout=keepalive_s,
                     ssl=ssl_context)


def _session(connector: Connector, timeout: aiohttp.ClientTimeout) -> aiohttp.ClientSession:
    # auto_decompress: we ask for identity; an upstream that compresses anyway is decoded, not relayed undecodable.
    # No cookie jar: a session is shared by every client, and a backend's Set-Cookie is the client's business.
    return aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=True,
                                 read_bufsize=READ_BUFSIZE, skip_auto_headers=("User-Agent",),
                                 cookie_jar=aiohttp.DummyCookieJar(), **HEADER_CAPS)


def create_session(settings: Settings) -> aiohttp.ClientSession:
    """Pass-throughs, `/v1/models`, the peers' warm start."""
    return _session(_connector(settings.max_connections_per_backend),
                    aiohttp.ClientTimeout(total=settings.total_timeout_s, connect=settings.connect_timeout_s,
                                          sock_connect=settings.connect_timeout_s))


def probe_session(timeout_s: float) -> aiohttp.ClientSession:
    """Health checks, or scrapes: one at a time per backend (two allowed), each whole exchange within `timeout_s`,
    waiting for a connection included."""
    return _session(_connector(2), aiohttp.ClientTimeout(total=timeout_s, connect=timeout_s))


class UpstreamClient:
    """The completion path's session: at most `limit_per_origin` connections to each backend; a request that finds
    them all busy waits at most `connect_timeout_s` for one (the wait and the connect together), then fails as a
    connect failure (the proxy fails over); `total_timeout_s` bounds a whole exchange, the body included."""

    def __init__(self, *, limit_per_origin: int, connect_timeout_s: float, total_timeout_s: float,
                 ssl_context: Any = True, keepalive_s: float = KEEPALIVE_S) -> None:
        timeout = aiohttp.ClientTimeout(total=total_timeout_s, connect=connect_timeout_s,
                                        sock_connect=connect_timeout_s)
        self.session = _session(_connector(limit_per_origin, ssl_context, keepalive_s), timeout)
        self._urls: dict[tuple[str, str], URL] = {}

    async def post(self, base_url: str, path: str, body: bytes, headers: dict[str, str]) -> aiohttp.ClientResponse:
        """Send a completion request; return once the answer's status and headers have arrived."""
        return await self.request("POST", base_url, path, body, headers)

    async def request(self, method: str, base_url: str, path: str, body: bytes | None,
                      headers: dict[str, str]) -> aiohttp.ClientResponse:
        """The answer's status and headers; a protocol error for an answer the gateway cannot relay (`checked`).
        A pooled connection the backend dropped before any byte of an answer (the keep-alive race: it closed an idle
        one as we sent on it) is retried once; aiohttp retries only idempotent methods itself."""
        key = (base_url, path)
        url = self._urls.get(key)
        if url is None:
            url = URL(base_url.rstrip("/") + path)
            if len(self._urls) < 4096:  # the pool's backends and our paths: never grows with what clients send
                self._urls[key] = url
        REUSED.set(False)
        try:
            resp = await self.session.request(method, url, data=body, headers=headers, allow_redirects=False)
        except aiohttp.ServerDisconnectedError as exc:
            if not REUSED.get() or not isinstance(exc.message, str):  # a fresh connection, or part of an answer
                raise
            resp = await self.session.request(method, url, data=body, headers=headers, allow_redirects=False)
        return checked(resp)

    def in_use(self) -> int:
        """Connections carrying an exchange now (a leak shows here). aiohttp has no public count: its connector's
        own sets are read, and a version without them reads 0."""
        return len(getattr(self.session.connector, "_acquired", ()))

    def idle(self) -> int:
        conns = getattr(self.session.connector, "_conns", {})
        return sum(len(c) for c in conns.values())

    async def close(self) -> None:
        await self.session.close()


def checked(resp: aiohttp.ClientResponse) -> aiohttp.ClientResponse:
    """`resp`, unless the gateway cannot relay it: a 101 (a protocol switch nobody asked for: we send no `Upgrade`)
    or an encoding aiohttp does not decode. Those close their connection and raise `UnrelayableAnswer`."""
    encoding = resp.headers.get("Content-Encoding", "").strip().lower()
    if resp.status != 101 and encoding in DECODED:
        return resp
    resp.close()
    if resp.status == 101:
        raise UnrelayableAnswer("upstream switched protocols (101) on a request without Upgrade")
    raise UnrelayableAnswer(f"upstream answered with an unsupported encoding: {encoding[:40]}")


class UnrelayableAnswer(Exception):
    """A well-formed answer the gateway cannot relay."""


def request_id(given: str | None) -> str:
    """The client's `x-request-id` when it is a short printable token, else a fresh one (logs stay JSON)."""
    if given is not None and _REQUEST_ID.fullmatch(given):
        return given
    return os.urandom(16).hex()  # as random as uuid4().hex, without building a UUID


async def read_capped(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body, or `ResponseTooLarge` as soon as it passes `limit` bytes (decoded)."""
    if resp.content_length is not None and resp.content_length > limit and "Content-Encoding" not in resp.headers:
        raise ResponseTooLarge(f"upstream answer of {resp.content_length} bytes exceeds {limit}")
    parts: list[bytes] = []
    size = 0
    while chunk := await resp.content.readany():
        parts.append(chunk)
        size += len(chunk)
        if size > limit:
            raise ResponseTooLarge(f"upstream answer exceeds {limit} bytes")
    return parts[0] if len(parts) == 1 else b"".join(parts)


def upstream_headers(client: CIMultiDictProxy[str], settings: Settings, client_auth_on: bool,
                     request_id: str) -> CIMultiDict[str]:
    """Headers sent upstream: hop-by-hop dropped, the upstream key set, the client's key never forwarded
    when the gateway checks keys itself."""
    out: CIMultiDict[str] = CIMultiDict()
    drop = _dropped(client, _DROP_REQUEST)
    for name, value in client.items():
        if name.lower() not in drop:
            out.add(name, value if value.isascii() else _printable(value))
    out["x-request-id"] = request_id
    out["Accept-Encoding"] = "identity"
    if settings.upstream_api_key is not None:
        out["Authorization"] = "Bearer " + settings.upstream_api_key.get_secret_value()
    elif not client_auth_on and "authorization" in client:
        out["Authorization"] = client["authorization"]
    return out


def _printable(value: str) -> str:
    """A client's header value whose bytes were not UTF-8 (aiohttp's server decodes them with `surrogateescape`):
    the bad bytes become U+FFFD, as aiohttp's writer would otherwise drop them or fail the request."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def response_headers(upstream: CIMultiDictProxy[str]) -> CIMultiDict[str]:
    out: CIMultiDict[str] = CIMultiDict()
    drop = _dropped(upstream, _DROP_RESPONSE)
    for name, value in upstream.items():
        if name.lower() not in drop:
            out.add(name, value)
    return out


def _dropped(headers: CIMultiDictProxy[str], hop_by_hop: frozenset[str]) -> frozenset[str]:
    """The hop-by-hop headers, and those named in `Connection` (RFC 9110 §7.6.1); most messages name none."""
    values = headers.getall("Connection", ())
    if not values:
        return hop_by_hop
    return hop_by_hop | {t.strip().lower() for v in values for t in v.split(",") if t.strip()}


def map_client_error(exc: BaseException) -> UpstreamFailure:
    """A completion's client failure as a failover reason. Waiting past the connect budget for a pooled
    connection (all held by answers that have not ended) is a connect failure: the request goes elsewhere."""
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return UpstreamFailure("connect", f"no upstream connection within the connect timeout ({exc})", timed_out=True)
    if isinstance(exc, TimeoutError):
        return UpstreamFailure("timeout", f"upstream timed out ({type(exc).__name__})", timed_out=True)
    if isinstance(exc, UnrelayableAnswer):  # a bug or a misconfiguration there, not a dead server: never ejects
        return UpstreamFailure("protocol", str(exc), suspect=True)
    if isinstance(exc, aiohttp.ClientConnectorError | ConnectionRefusedError):
        return UpstreamFailure("connect", f"cannot connect to upstream: {exc}")
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError | OSError):
        return UpstreamFailure("connect", f"upstream closed the connection: {exc}")
    return UpstreamFailure("protocol", f"bad upstream response: {type(exc).__name__}: {str(exc)[:200]}")


CLIENT_ERRORS = (aiohttp.ClientError, UnrelayableAnswer, OSError)  # what a read or a request may raise, timeouts aside


def without_credentials(url: str) -> str:
    """`url` with any `user:password@` removed: the pool keeps credentials out of every URL it shows or logs."""
    parsed = URL(url)
    return str(parsed.with_user(None)) if parsed.user or parsed.password else url


def url_credentials(url: str) -> str | None:
    """The `Authorization` value (Basic) for credentials in `url`, or None."""
    parsed = URL(url)
    if not parsed.user:
        return None
    return "Basic " + base64.b64encode(f"{parsed.user}:{parsed.password or ''}".encode()).decode()
