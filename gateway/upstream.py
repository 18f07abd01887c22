"""The one upstream `ClientSession`, header filtering and the translation of aiohttp errors.

aiohttp exceptions never leave this module's callers: they are mapped to an `UpstreamFailure` with a
short reason (`connect`, `timeout`, `status_5xx`, `protocol`), which the proxy fails over on.
"""

from __future__ import annotations

import asyncio
import base64

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from gateway.settings import Settings

HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer", "trailers",
    "transfer-encoding", "upgrade", "proxy-connection",
})
# content-encoding: aiohttp hands the handler a decoded body, so the bytes sent upstream are never encoded
_DROP_REQUEST = HOP_BY_HOP | {"host", "content-length", "authorization", "accept-encoding", "x-api-key",
                              "content-encoding"}
_DROP_RESPONSE = HOP_BY_HOP | {"content-length", "content-encoding", "server", "date"}
RETRY_STATUSES = frozenset({500, 502, 503, 504})


class UpstreamFailure(Exception):
    """A failed attempt before the first byte (so failover is allowed); `reason` is a metric label."""

    def __init__(self, reason: str, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status


def create_session(settings: Settings) -> aiohttp.ClientSession:
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=settings.max_connections_per_backend,
                                     ttl_dns_cache=300, enable_cleanup_closed=True)
    timeout = aiohttp.ClientTimeout(total=settings.total_timeout_s, sock_connect=settings.connect_timeout_s)
    # auto_decompress: an upstream that compresses anyway reaches the client decoded (its Content-Encoding is
    # dropped from the relayed headers); upstream redirects are never followed (`allow_redirects=False` at
    # each call: a prompt is never re-posted to another host).
    return aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=True,
                                 skip_auto_headers=("User-Agent",))


def upstream_headers(client: CIMultiDictProxy[str], settings: Settings, client_auth_on: bool,
                     request_id: str) -> CIMultiDict[str]:
    """Headers sent upstream: hop-by-hop dropped, the upstream key set, the client's key never forwarded
    when the gateway checks keys itself."""
    out: CIMultiDict[str] = CIMultiDict()
    drop = _DROP_REQUEST | _connection_tokens(client)
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
    drop = _DROP_RESPONSE | _connection_tokens(upstream)
    for name, value in upstream.items():
        if name.lower() not in drop:
            out.add(name, value)
    return out


def _connection_tokens(headers: CIMultiDictProxy[str]) -> frozenset[str]:
    """Headers named in `Connection` are hop-by-hop too (RFC 9110 §7.6.1)."""
    values = headers.getall("Connection", [])
    return frozenset(t.strip().lower() for v in values for t in v.split(",") if t.strip())


def map_client_error(exc: BaseException) -> UpstreamFailure:
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return UpstreamFailure("timeout", f"upstream timed out ({type(exc).__name__})")
    if isinstance(exc, aiohttp.ClientConnectorError | ConnectionRefusedError):
        return UpstreamFailure("connect", f"cannot connect to upstream: {exc}")
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientOSError | ConnectionResetError):
        return UpstreamFailure("connect", f"upstream closed the connection: {exc}")
    return UpstreamFailure("protocol", f"bad upstream response: {type(exc).__name__}: {exc}")


def without_credentials(url: str) -> str:
    """`url` with any `user:password@` removed (for /ready, /admin and logs)."""
    parsed = URL(url)
    return str(parsed.with_user(None)) if parsed.user or parsed.password else url


def url_credentials(url: str) -> str | None:
    """The `Authorization` value for credentials in `url` (Basic), or None."""
    parsed = URL(url)
    if not parsed.user:
        return None
    token = base64.b64encode(f"{parsed.user}:{parsed.password or ''}".encode()).decode()
    return "Basic " + token
