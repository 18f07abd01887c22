"""Two fault backends and a gateway, each a real process on 127.0.0.1, started and stopped together."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import psutil

from gateway.bench.kit.procs import free_port, wait_ready


class Backend:
    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gateway.bench.faults", "--serve-backend", stdout=asyncio.subprocess.PIPE,
            start_new_session=True)
        assert self.proc.stdout is not None
        self.url = (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().strip()

    async def call(self, session: aiohttp.ClientSession, **changes: Any) -> dict[str, Any]:
        if changes:
            async with session.post(self.url + "/_fault", json=changes) as r:
                return dict(await r.json())
        async with session.get(self.url + "/_stats") as r:
            return dict(await r.json())

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


GATEWAY_ENV = {
    "SPECGATE_POLICY": "baseline",  # every request lands on the backend that faults: the worst case
    "SPECGATE_HEALTH_INTERVAL_S": "0.5", "SPECGATE_SCRAPE_INTERVAL_S": "1.0", "SPECGATE_FIRST_BYTE_TIMEOUT_S": "1.0",
    "SPECGATE_IDLE_TIMEOUT_S": "1.0", "SPECGATE_EJECT_BASE_COOLDOWN_S": "2.0", "SPECGATE_DRAIN_TIMEOUT_S": "5",
    "SPECGATE_LOG_REQUESTS": "false", "SPECGATE_LOG_LEVEL": "WARNING", "SPECGATE_WORKERS": "1",
}


@contextlib.asynccontextmanager
async def system(log_dir: Path, name: str) -> AsyncIterator[tuple[Backend, Backend, str, psutil.Process]]:
    """Two fault backends and a gateway process in front of them; all stopped on exit."""
    base, spec = Backend(), Backend()
    await asyncio.gather(base.start(), spec.start())
    port = free_port()
    env = {**os.environ, **GATEWAY_ENV, "SPECGATE_HOST": "127.0.0.1", "SPECGATE_PORT": str(port),
           "SPECGATE_BASELINE_URLS": base.url, "SPECGATE_SPECULATIVE_URLS": spec.url}
    url = f"http://127.0.0.1:{port}"
    log = (log_dir / f"gateway-{name}.log").open("wb")
    gw = await asyncio.create_subprocess_exec(sys.executable, "-m", "gateway", "serve", env=env, stdout=log,
                                              stderr=log, start_new_session=True)
    try:
        await wait_ready(url, 30.0, gw)
        yield base, spec, url, psutil.Process(gw.pid)
    finally:
        if gw.returncode is None:
            gw.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(gw.wait(), 15)
            except TimeoutError:
                gw.kill()
                await gw.wait()
        log.close()
        await base.kill()
        await spec.kill()
