"""Shared fixtures: real servers on 127.0.0.1 (fault-injecting fakes, the emulator, the gateway)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry

sys.path.insert(0, str(Path(__file__).parent))

from gateway.app import create_app
from gateway.bench.kit.fake_vllm import FakeBackend
from gateway.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def require_binary(name: str) -> str:
    """Path of a real component; under CI=true its absence fails the test instead of skipping it."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is required under CI=true (installed by .ci/run)")
        pytest.skip(f"{name} not installed (CI installs it; see .ci/run)")
    return path


class RunningGateway:
    def __init__(self, runner: web.AppRunner, url: str, app: web.Application) -> None:
        self.runner, self.url, self.app = runner, url, app


async def start_gateway(settings: Settings) -> RunningGateway:
    app = create_app(settings, registry=CollectorRegistry())
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return RunningGateway(runner, f"http://127.0.0.1:{port}", app)


async def until(predicate: Callable[[], bool], timeout_s: float = 10.0, step_s: float = 0.01) -> None:
    """Wait for `predicate` to hold, polling; fail the test with a clear message after `timeout_s` (a generous
    bound: a busy machine is slow, never wrong)."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, f"condition not reached within {timeout_s:g} s"
        await asyncio.sleep(step_s)


def fast_settings(**overrides: Any) -> Settings:
    base: dict[str, Any] = dict(health_interval_s=0.1, scrape_interval_s=0.2, backoff_base_s=0.001,
                                eject_base_cooldown_s=0.3, log_requests=False)
    base.update(overrides)
    return Settings(**base)


@pytest.fixture
async def fakes() -> AsyncIterator[tuple[FakeBackend, FakeBackend]]:
    base, spec = FakeBackend(), FakeBackend(spec=True, tokens_per_chunk=3)
    await base.start()
    await spec.start()
    yield base, spec
    await base.stop()
    await spec.stop()


@pytest.fixture
async def gateway_factory() -> AsyncIterator[Callable[..., Any]]:
    started: list[RunningGateway] = []

    async def make(**overrides: Any) -> RunningGateway:
        gw = await start_gateway(fast_settings(**overrides))
        started.append(gw)
        return gw

    yield make
    for gw in started:
        await gw.runner.cleanup()
