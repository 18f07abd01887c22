"""HTTP edges: routes, auth, error translation. Everything here is thin; decisions live elsewhere."""

from __future__ import annotations

import asyncio
import hmac
import logging
import time
from collections.abc import Awaitable, Callable
from urllib.parse import unquote

import aiohttp
import orjson
from aiohttp import web
from aiohttp.typedefs import Middleware
from prometheus_client import CONTENT_TYPE_LATEST
from yarl import URL

from gateway import persist
from gateway.backends import BackendPool
from gateway.core.protocol import (
    CHAT,
    COMPLETIONS,
    BodyTooLarge,
    Draining,
    GatewayError,
    InvalidRequest,
    NoBackendAvailable,
    NotFound,
    RequestTimeout,
    Unauthorized,
    UpstreamUnavailable,
)
from gateway.logevents import event_line
from gateway.proxy import Proxy, gateway_error_response
from gateway.settings import redact_url
from gateway.state import AppState
from gateway.upstream import ResponseTooLarge, read_capped, request_id, response_headers, upstream_headers

log = logging.getLogger("specgate.http")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
OPEN_PATHS = frozenset({"/health", "/ready", "/metrics"})
_JSON = "application/json"
_MODELS_BYTES = 4 * 1024 * 1024


def _bearer(request: web.Request) -> bytes:
    auth = request.headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip().encode("utf-8", "surrogateescape")
    return request.headers.get("x-api-key", "").encode("utf-8", "surrogateescape")


def _key_matches(given: bytes, keys: list[bytes]) -> bool:
    match = False
    for key in keys:  # compare against every key: the time does not depend on which one matched
        match |= hmac.compare_digest(given, key)
    return match


def make_middleware(state: AppState) -> Middleware:
    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        path = request.path
        if path in OPEN_PATHS:
            return await handler(request)
        state.active_requests += 1  # what a drain waits for: every request but the probes
        try:
            if path.startswith("/admin/"):
                if state.admin_keys and not _key_matches(_bearer(request), state.admin_keys):
                    raise Unauthorized("Invalid or missing admin API key.")
            elif state.client_keys and not _key_matches(_bearer(request), state.client_keys):
                raise Unauthorized("Invalid or missing API key. Send it as 'Authorization: Bearer <key>'.")
            if state.draining and path.startswith("/v1/"):
                raise Draining("The gateway is shutting down; retry on another replica.")
            return await handler(request)
        except GatewayError as err:
            response = gateway_error_response(err)
            if isinstance(err, RequestTimeout):  # answer, then close: no lingering for the rest of a slow body
                response.force_close()
                await response.prepare(request)
                await response.write_eof()
                if request.transport is not None:
                    request.transport.close()
            return response
        except web.HTTPRequestEntityTooLarge:
            return gateway_error_response(BodyTooLarge(
                f"Request body exceeds the limit of {state.settings.max_body_bytes} bytes."))
        except web.HTTPException as exc:
            if exc.status >= 400:
                err_type = "invalid_request_error" if exc.status < 500 else "server_error"
                return web.Response(status=exc.status, content_type=_JSON, body=orjson.dumps(
                    {"error": {"message": exc.reason, "type": err_type, "param": None, "code": exc.status}}))
            raise
        except Exception:  # a bug must not answer plain text: log it with its traceback, answer OpenAI-shaped
            log.exception(event_line("unhandled_error", path=path))
            return gateway_error_response(GatewayError("Internal gateway error."))
        finally:
            state.active_requests -= 1
    return middleware


async def chat_completions(request: web.Request) -> web.StreamResponse:
    return await _proxy(request).handle(request, CHAT)


async def completions(request: web.Request) -> web.StreamResponse:
    return await _proxy(request).handle(request, COMPLETIONS)


def _proxy(request: web.Request) -> Proxy:
    return request.app[AppState.key].proxy


async def health(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def ready(request: web.Request) -> web.Response:
    state = request.app[AppState.key]
    pool = state.pool
    body = {
        "ready": not state.draining and not state.measuring_steps and pool.ready(),
        "draining": state.draining,
        "backends": [
            {"name": b.name, "role": b.role, "group": b.group, "url": redact_url(b.url), "healthy": b.healthy,
             "routable": b.routable(_now()),
             "inflight": b.inflight, "ejections": b.ejections}
            for b in pool.backends
        ],
    }
    return web.json_response(body, status=200 if body["ready"] else 503, dumps=_dumps)


async def metrics(request: web.Request) -> web.Response:
    state = request.app[AppState.key]
    state.metrics.loop_tasks.set(len(asyncio.all_tasks()))
    body = state.render_metrics()
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})


async def models(request: web.Request) -> web.Response:
    """The models all routable backends serve, merged by id."""
    # discovered (`served_models`): every model some backend serves, as routing sees them (a model whose servers are
    # down for now is still listed: its requests get 503, not 404)
    if listing := request.app[AppState.key].router.fleet.models.listing():
        return web.json_response({"object": "list", "data": listing}, dumps=_dumps)
    state = request.app[AppState.key]
    session = state.proxy.session
    assert session is not None
    now = _now()
    backends = [b for b in state.pool.backends if b.routable(now)]
    if not backends:
        raise NoBackendAvailable("No healthy backend is available.")
    headers = upstream_headers(request.headers, state.settings, bool(state.client_keys), "models")

    async def fetch(url: str) -> list[dict[str, object]]:
        try:
            async with session.get(url + "/v1/models", headers=headers, allow_redirects=False,
                                   timeout=aiohttp.ClientTimeout(total=5)) as r:
                if r.status != 200:
                    return []
                data = orjson.loads(await read_capped(r, _MODELS_BYTES))
        except (aiohttp.ClientError, OSError, TimeoutError, orjson.JSONDecodeError, ResponseTooLarge):
            return []
        entries = data.get("data") if isinstance(data, dict) else None  # any other shape: this backend has none
        return [m for m in entries if isinstance(m, dict)] if isinstance(entries, list) else []

    merged: dict[str, dict[str, object]] = {}
    for entries in await asyncio.gather(*(fetch(b.url) for b in backends)):
        for entry in entries:
            merged.setdefault(str(entry.get("id")), entry)
    if not merged:
        raise UpstreamUnavailable("No backend answered /v1/models.")
    return web.json_response({"object": "list", "data": list(merged.values())}, dumps=_dumps)


async def passthrough(request: web.Request) -> web.StreamResponse:
    """Other `/v1/*` paths go to the least-loaded healthy baseline, streamed both ways. Only a normalised
    path is forwarded (no dot segments, no encoded slashes), redirects are not followed."""
    state = request.app[AppState.key]
    session = state.proxy.session
    assert session is not None
    path = _safe_v1_path(request.raw_path)
    backend = state.pool.pick("baseline", _now()) or state.pool.pick("speculative", _now())
    if backend is None:
        raise NoBackendAvailable("No healthy backend is available.")
    body = await state.proxy.intake.read(request)
    headers = upstream_headers(request.headers, state.settings, bool(state.client_keys),
                               request_id(request.headers.get("x-request-id")))
    url = URL(backend.url + path, encoded=True)
    try:
        async with session.request(request.method, url, data=body or None, headers=headers,
                                   allow_redirects=False) as r:
            out = response_headers(r.headers)
            out["x-specgate-backend"] = backend.role
            out["x-specgate-instance"] = backend.name
            out["x-specgate-reason"] = "passthrough"
            resp = web.StreamResponse(status=r.status, headers=out)
            await resp.prepare(request)
            try:
                async for chunk in r.content.iter_any():  # never buffered whole: back-pressure from the client
                    await resp.write(chunk)
            except (aiohttp.ClientError, OSError, TimeoutError):
                if request.transport is not None:  # the answer had started: a closed connection says it broke
                    request.transport.close()
                return resp
            await resp.write_eof()
            return resp
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise UpstreamUnavailable(f"Upstream failed: {type(exc).__name__}") from None


def _safe_v1_path(raw: str) -> str:
    """The request's raw path and query if it is a plain `/v1/...` path, else `InvalidRequest` (400)."""
    path, sep, query = raw.partition("?")
    segments = path.split("/")
    decoded = [unquote(seg) for seg in segments]
    if (not path.startswith("/v1/") or "%2f" in path.lower() or "%5c" in path.lower() or "\\" in path
            or any(seg in (".", "..") for seg in decoded) or "" in segments[2:-1]):
        raise InvalidRequest("Path must be a normalised /v1/ path (no dot segments or encoded slashes).",
                             code="invalid_path")
    return path + sep + query


async def admin_state(request: web.Request) -> web.Response:
    state = request.app[AppState.key]
    pool: BackendPool = state.pool
    body = {
        "policy": state.settings.policy,
        "learner": state.learner.state(),
        "regimes": state.router.state(),
        "shadow": None if state.proxy.accounting.shadow is None else state.proxy.accounting.shadow.state(),
        "fleet": state.router.fleet.state(),  # served models, prefix indexes (`gateway.fleet_view`)
        "backends": [
            {"name": b.name, "role": b.role, "group": b.group, "url": redact_url(b.url), "healthy": b.healthy,
             "inflight": b.inflight, "routing_load": pool.load(b, _now()),
             "scraped_load_age_s": None if b.scraped_load is None else round(_now() - b.scraped_at, 3),
             "ejections": b.ejections, "consecutive_failures": b.consecutive_failures,
             "scraped": None if b.snapshot is None else {
                 "running": b.snapshot.running, "waiting": b.snapshot.waiting,
                 "kv_cache_usage": b.snapshot.kv_cache_usage},
             "last_spec_interval": None if b.last_spec is None else {
                 "acceptance_rate": b.last_spec.acceptance_rate,
                 "mean_acceptance_length": b.last_spec.mean_acceptance_length}}
            for b in pool.backends
        ],
        "note": "learned state is per process when SPECGATE_WORKERS > 1",
    }
    return web.json_response(body, dumps=_dumps)


async def admin_learner(request: web.Request) -> web.Response:
    """The learner's state, for a new replica's warm start (`SPECGATE_PEERS`)."""
    state = request.app[AppState.key]
    return web.json_response(persist.state_document(state.learner, state.router), dumps=_dumps)


async def admin_config(request: web.Request) -> web.Response:
    return web.json_response(request.app[AppState.key].settings.redacted(), dumps=_dumps)


async def not_found(request: web.Request) -> web.Response:
    raise NotFound(f"Unknown path {request.path}.")


def _dumps(obj: object) -> str:
    return orjson.dumps(obj).decode()


def _now() -> float:
    return time.monotonic()


def add_routes(app: web.Application) -> None:
    app.router.add_post(CHAT, chat_completions)
    app.router.add_post(COMPLETIONS, completions)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/health", health)
    app.router.add_get("/ready", ready)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/admin/state", admin_state)
    app.router.add_get("/admin/config", admin_config)
    app.router.add_get("/admin/learner", admin_learner)
    app.router.add_route("*", "/v1/{tail:.*}", passthrough)
    app.router.add_route("*", "/{tail:.*}", not_found)
