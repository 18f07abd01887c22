"""A gateway as a real subprocess (`python -m gateway serve`), configured by environment only."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import aiohttp


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


async def wait_ready(url: str, timeout_s: float, proc: asyncio.subprocess.Process | None = None) -> None:
    deadline = time.monotonic() + timeout_s
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if proc is not None and proc.returncode is not None:
                raise RuntimeError(f"gateway exited with status {proc.returncode} before it was ready")
            with contextlib.suppress(aiohttp.ClientError, OSError):
                async with session.get(url + "/ready", timeout=aiohttp.ClientTimeout(total=1)) as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.05)
    raise TimeoutError(f"{url}/ready did not answer 200 within {timeout_s:.0f} s")


async def fetch_text(url: str, timeout_s: float = 5.0) -> str:
    async with aiohttp.ClientSession() as session, session.get(url, timeout=aiohttp.ClientTimeout(total=timeout_s)) \
            as resp:
        resp.raise_for_status()
        return await resp.text()


async def stop_process(proc: asyncio.subprocess.Process, grace_s: float = 10.0) -> None:
    """SIGTERM (a gateway drains), then SIGKILL after `grace_s`."""
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), grace_s)
    except TimeoutError:
        proc.kill()
        await proc.wait()


@contextlib.asynccontextmanager
async def gateway_process(
    env: Mapping[str, str], log_path: Path, ready_timeout_s: float = 30.0, host: str = "127.0.0.1",
    port: int | None = None,
) -> AsyncIterator[str]:
    """Start `python -m gateway serve` with `env` (SPECGATE_*), yield its base URL, stop it with SIGTERM."""
    port = port or free_port(host)
    full_env = {**os.environ, **env, "SPECGATE_HOST": host, "SPECGATE_PORT": str(port)}
    full_env.setdefault("PYTHONUNBUFFERED", "1")
    url = f"http://{host}:{port}"
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gateway", "serve", env=full_env, stdout=log, stderr=log,
            start_new_session=True,
        )
        try:
            await wait_ready(url, ready_timeout_s, proc)
            yield url
        finally:
            await stop_process(proc)


@contextlib.asynccontextmanager
async def fake_pair_gateway(baseline_url: str, speculative_url: str, log_dir: Path, **env: str,
                            ) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    """`python -m gateway serve` in front of two (fake) backends, policy `baseline`, quick health checks; yields
    the process (a test may signal it) and its URL; killed on exit if still running."""
    port = free_port()
    full = {**os.environ, "SPECGATE_HOST": "127.0.0.1", "SPECGATE_PORT": str(port),
            "SPECGATE_BASELINE_URLS": baseline_url, "SPECGATE_SPECULATIVE_URLS": speculative_url,
            "SPECGATE_POLICY": "baseline", "SPECGATE_HEALTH_INTERVAL_S": "0.2", "SPECGATE_SCRAPE_INTERVAL_S": "0.5",
            "SPECGATE_WORKERS": "1", **env}
    url = f"http://127.0.0.1:{port}"
    log_path = log_dir / "gateway.log"
    with log_path.open("wb") as log:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "gateway", "serve", env=full, stdout=log,
                                                    stderr=log, start_new_session=True)
        try:
            try:
                await wait_ready(url, 15.0, proc)
            except (RuntimeError, TimeoutError) as exc:
                raise RuntimeError(f"{exc}; log:\n{log_path.read_text()}") from exc
            yield proc, url
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
