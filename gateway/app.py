"""Wiring only: build the app's objects, routes and background tasks from `Settings`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Coroutine

import aiohttp
from aiohttp import web
from prometheus_client import CollectorRegistry, disable_created_metrics

from gateway import persist
from gateway.backends import SCRAPE_TIMEOUT_S, Backend, BackendPool
from gateway.core.learner import Learner
from gateway.core.vllm_metrics import SpecDelta
from gateway.handlers import add_routes, make_middleware
from gateway.logevents import log_event
from gateway.metrics import FLUSH_INTERVAL_S, Metrics
from gateway.proxy import Proxy
from gateway.quiet_steps import measure_quiet_steps
from gateway.router import Router
from gateway.served_models import run_refresh, session_fetch
from gateway.settings import Settings, redact_url
from gateway.state import AppState
from gateway.upstream import UpstreamClient, create_session, probe_session, url_credentials

log = logging.getLogger("specgate")


def create_app(settings: Settings, registry: CollectorRegistry | None = None) -> web.Application:
    _check_upstream_auth(settings)
    disable_created_metrics()  # type: ignore[no-untyped-call]  # no dashboard uses `_created` series
    metrics = Metrics(registry)
    learner = Learner(settings.learner_config())

    def on_spec_delta(backend: Backend, delta: SpecDelta) -> None:
        learner.observe_backend_acceptance(delta.tokens_per_step, delta.drafts)

    pool = BackendPool(settings, metrics, on_spec_delta)
    router = Router(settings, pool, learner, metrics)
    client_keys = settings.client_keys()
    admin_keys = [settings.admin_api_key.get_secret_value().encode()] if settings.admin_api_key else client_keys
    proxy = Proxy(settings, pool, router, learner, metrics, client_auth_on=bool(client_keys))
    state = AppState(settings, metrics, pool, learner, router, proxy, client_keys, admin_keys)

    app = web.Application(client_max_size=settings.max_body_bytes, middlewares=[make_middleware(state)])
    app[AppState.key] = state
    add_routes(app)
    app.cleanup_ctx.append(_upstream_and_loops)
    return app


def _check_upstream_auth(settings: Settings) -> None:
    """aiohttp cannot send URL credentials (Basic) and an Authorization header together: refuse to start
    rather than fail every request routed there."""
    with_credentials = [redact_url(b.url) for b in settings.topology() if url_credentials(b.url) is not None]
    if with_credentials and settings.upstream_api_key is not None:
        raise ValueError(f"backend URLs with credentials ({', '.join(with_credentials)}) cannot be combined with "
                         "SPECGATE_UPSTREAM_API_KEY: use one or the other")


async def _upstream_and_loops(app: web.Application) -> AsyncIterator[None]:
    state = app[AppState.key]
    session = create_session(state.settings)
    state.proxy.session = session
    settings = state.settings
    client = state.proxy.client = UpstreamClient(limit_per_origin=settings.max_connections_per_backend,
                                                 connect_timeout_s=settings.connect_timeout_s,
                                                 total_timeout_s=settings.total_timeout_s)
    if state.proxy.migrator is not None:
        state.proxy.migrator.client = client  # resumes go through the completion client
    health, scrapes = probe_session(SCRAPE_TIMEOUT_S), probe_session(SCRAPE_TIMEOUT_S)
    await persist.restore(session, settings, state.learner, state.router)
    tasks = [
        asyncio.create_task(state.pool.run_health(health), name="specgate-health"),
        asyncio.create_task(state.pool.run_scrape(scrapes), name="specgate-scrape"),
        asyncio.create_task(_export_loop(state), name="specgate-export"),
        asyncio.create_task(_flush_loop(state), name="specgate-metrics-flush"),
        asyncio.create_task(_models_loop(state, session), name="specgate-models"),  # served models, KV capacity
        asyncio.create_task(_calibrate_loop(state), name="specgate-prefix-scale"),
    ]
    if settings.startup_step_probes and state.pool.shared_groups():
        state.measuring_steps = True  # /ready waits for it: the GPU is idle only before traffic
        tasks.append(asyncio.create_task(_measure_steps(state, session), name="specgate-quiet-steps"))
    if settings.state_file is not None:
        saver = persist.save_periodically(settings, state.learner, state.router)
        tasks.append(asyncio.create_task(saver, name="specgate-state"))
    yield
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError):
            try:
                await task
            except Exception as exc:  # a loop that died is logged; shutdown and the final save go on
                log_event(log, logging.ERROR, "background_task_failed", task=task.get_name(), why=repr(exc)[:500])
    state.metrics.flush()
    if settings.state_file is not None:
        persist.save_or_log(settings.state_file, state.learner, state.router)
    for closing in (session, health, scrapes):
        await closing.close()
    await client.close()
    state.pool.close()
    state.proxy.intake.close()


async def _measure_steps(state: AppState, session: aiohttp.ClientSession) -> None:
    try:
        await measure_quiet_steps(state.pool, state.learner, session, state.settings.startup_step_probes)
    finally:
        state.measuring_steps = False


async def _flush_loop(state: AppState) -> None:
    """The request path's counts reach the Prometheus values within `FLUSH_INTERVAL_S`, for another worker's
    `/metrics` (multiprocess mode); this process's own render flushes first."""
    while True:
        await asyncio.sleep(FLUSH_INTERVAL_S)
        state.metrics.flush()


def _models_loop(state: AppState, session: aiohttp.ClientSession) -> Coroutine[None, None, None]:
    """Each backend's `/v1/models` every health interval, and its KV capacity once (`gateway.served_models`)."""
    fleet, pool = state.router.fleet, state.pool
    headers = {"Authorization": "Bearer " + key.get_secret_value()} if (key := state.settings.upstream_api_key) else {}
    return run_refresh(fleet.models, lambda: [(b.name, b.url) for b in pool.backends], session_fetch(session, headers),
                       state.settings.health_interval_s, fleet.set_capacity)


def calibrate_indexes(state: AppState) -> None:
    """Each backend's prefix index sized by the share of its looked-up prompt tokens this process sent
    (`FleetView.calibrate`), from the scrapes the pool already reads: each scrape's counter paired with this
    process's estimate as of when that scrape was sent."""
    for b in state.pool.backends:
        if b.snapshot is not None and b.snapshot.prefix_queries > 0:
            state.router.fleet.calibrate(b.name, b.snapshot_prompt_tokens, b.snapshot.prefix_queries)


async def _calibrate_loop(state: AppState) -> None:
    while True:
        await asyncio.sleep(state.settings.health_interval_s)
        calibrate_indexes(state)


async def _export_loop(state: AppState) -> None:
    await persist.every(state.settings.scrape_interval_s, "learned-export", state.export_learned, first=True)
