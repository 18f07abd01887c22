"""Shared fixtures: real servers on 127.0.0.1 (fault-injecting fakes, the emulator, the gateway)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from gateway.bench.kit.fake_vllm import FakeBackend, started_pair
from gateway.bench.kit.inproc import RunningGateway, fast_settings, start_gateway

FIXTURES = Path(__file__).parent / "fixtures"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _require_binary(name: str) -> str:
    """Path of a real component; under CI=true its absence fails the test instead of skipping it."""
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is required under CI=true (installed by .ci/run)")
        pytest.skip(f"{name} not installed (CI installs it; see .ci/run)")
    return path


@pytest.fixture
def require_binary() -> Callable[[str], str]:
    return _require_binary


@pytest.fixture(scope="session")
def dashboard_build() -> ModuleType:
    """dashboards/build.py is a script, not a package module: load it by path (once)."""
    name = "specgate_dashboard_build"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parent.parent / "dashboards" / "build.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses look their module up while the class is built
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
async def fakes() -> AsyncIterator[tuple[FakeBackend, FakeBackend]]:
    async with started_pair(FakeBackend) as pair:
        yield pair


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
