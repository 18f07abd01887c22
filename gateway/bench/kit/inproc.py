"""A gateway app served in this process on 127.0.0.1 (a free port), with quick health and scrape periods for
tests; and `until`, a poll that fails loudly after a generous bound."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from gateway.settings import Settings


class RunningGateway:
    def __init__(self, runner: web.AppRunner, url: str, app: web.Application) -> None:
        self.runner, self.url, self.app = runner, url, app


GatewayFactory = Callable[..., Awaitable[RunningGateway]]  # the `gateway_factory` fixture: settings overrides in


async def serve_app(app: web.Application) -> tuple[web.AppRunner, str]:
    """`app` served on 127.0.0.1 at a free port (handlers cancelled when their client goes): its runner and URL."""
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, f"http://127.0.0.1:{port}"


async def start_gateway(settings: Settings) -> RunningGateway:
    app = create_app(settings, registry=CollectorRegistry())
    runner, url = await serve_app(app)
    return RunningGateway(runner, url, app)


async def until(predicate: Callable[[], bool], timeout_s: float = 10.0, step_s: float = 0.01) -> None:
    """Wait for `predicate` to hold, polling; fail with a clear message after `timeout_s` (a generous bound: a
    busy machine is slow, never wrong)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() >= deadline:
            raise AssertionError(f"condition not reached within {timeout_s:g} s")
        await asyncio.sleep(step_s)


def fast_settings(**overrides: Any) -> Settings:
    base: dict[str, Any] = dict(health_interval_s=0.1, scrape_interval_s=0.2, backoff_base_s=0.001,
                                eject_base_cooldown_s=0.3, log_requests=False)
    base.update(overrides)
    return Settings(**base)
