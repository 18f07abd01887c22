"""The upstream clients (`h1client` for completions, health checks and scrapes; aiohttp's session for the rest),
header filtering and the translation of client errors.

Client exceptions never leave this module's callers: they are mapped to an `UpstreamFailure` with a
short reason (`connect`, `timeout`, `status_5xx`, `protocol`), which the proxy fails over on.
"""

from __future__ import annotations

import base64
import os
import re

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from gateway.h1client import (
    ResponseTooLarge,
    UpstreamClient,
    UpstreamConnectError,
    UpstreamDisconnected,
)
from gateway.settings import Settings

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

    def __init__(self, reason: str, message: str, *, status: int | None = None, suspect: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status
        # True when the request itself may be the cause (a 5xx answer, a timeout after it was sent):
        # the backend is blamed only if another backend then serves the same request.
        self.suspect = suspect


class StatusFailure(UpstreamFailure):
    """A retryable upstream status (5xx); kept so the last one can be passed through to the client."""

    def __init__(self, status: int, body: bytes, headers: CIMultiDictProxy[str]) -> None:
        super().__init__("status_5xx", f"upstream answered {status}", status=status, suspect=True)
        self.body = body
        self.headers = headers


def create_session(settings: Settings) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=settings.max_connections_per_backend,
                                     ttl_dns_cache=300, enable_cleanup_closed=True)
    timeout = aiohttp.ClientTimeout(total=settings.total_timeout_s, sock_connect=settings.connect_timeout_s)
    # auto_decompress: we ask for identity; an upstream that compresses anyway is decoded, not relayed undecodable.
    # No cookie jar: the session is shared by every client, and a backend's Set-Cookie is the client's business.
    return aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=True,
                                 skip_auto_headers=("User-Agent",), cookie_jar=aiohttp.DummyCookieJar())


def create_client(settings: Settings) -> UpstreamClient:
    """The completion path's client: the same pool size and timeouts as the session."""
    return UpstreamClient(limit_per_origin=settings.max_connections_per_backend,
                          connect_timeout_s=settings.connect_timeout_s, total_timeout_s=settings.total_timeout_s)


def request_id(given: str | None) -> str:
    """The client's `x-request-id` when it is a short printable token, else a fresh one (logs stay JSON)."""
    if given is not None and _REQUEST_ID.fullmatch(given):
        return given
    return os.urandom(16).hex()  # as random as uuid4().hex, without building a UUID


async def read_capped(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body, or `ResponseTooLarge` as soon as it passes `limit` bytes (decoded)."""
    if resp.content_length is not None and resp.content_length > limit and "Content-Encoding" not in resp.headers:
        raise ResponseTooLarge(f"upstream answer of {resp.content_length} bytes exceeds {limit}")
    buf = bytearray()
    while chunk := await resp.content.readany():
        buf += chunk
        if len(buf) > limit:
            raise ResponseTooLarge(f"upstream answer exceeds {limit} bytes")
    return bytes(buf)


def upstream_headers(client: CIMultiDictProxy[str], settings: Settings, client_auth_on: bool,
                     request_id: str) -> CIMultiDict[str]:
    """Headers sent upstream: hop-by-hop dropped, the upstream key set, the client's key never forwarded
    when the gateway checks keys itself."""
    out: CIMultiDict[str] = CIMultiDict()
    drop = _dropped(client, _DROP_REQUEST)
    for name, value in client.items():
        if name.lower() not in drop:
            out.add(name, value)
    out["x-request-id"] = request_id
    out["Accept-Encoding"] = "identity"
    if settings.upstream_api_key is not None:
        out["Authorization"] = "Bearer " + settings.upstream_api_key.get_secret_value()
    elif not client_auth_on and "authorization" in client:
        out["Authorization"] = client["authorization"]
    return out


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
    """The completion client's failure (`gateway.h1client`) as a failover reason."""
    if isinstance(exc, TimeoutError):
        return UpstreamFailure("timeout", f"upstream timed out ({type(exc).__name__})")
    if isinstance(exc, UpstreamConnectError | ConnectionRefusedError):
        return UpstreamFailure("connect", f"cannot connect to upstream: {exc}")
    if isinstance(exc, UpstreamDisconnected | OSError):
        return UpstreamFailure("connect", f"upstream closed the connection: {exc}")
    return UpstreamFailure("protocol", f"bad upstream response: {type(exc).__name__}: {exc}")


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
