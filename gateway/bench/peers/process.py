"""Start one peer router in front of some workers, wait until it answers, stop it afterwards."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import aiohttp

from gateway.bench.kit.procs import free_port, stop_process
from gateway.bench.peers.spec import INSTALL_HINT, PeerSpec


class PeerStartError(RuntimeError):
    """The peer could not be started: not installed, exited, or never ready. The message says which."""


def _tail(path: Path, lines: int = 8) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return " | ".join(line.strip()[:200] for line in text.splitlines()[-lines:] if line.strip())


async def _ready(url: str, proc: asyncio.subprocess.Process, timeout_s: float, log: Path) -> None:
    """Ready when `/health` answers 200 (both routers wait for their workers' health before serving)."""
    deadline = time.monotonic() + timeout_s
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if proc.returncode is not None:
                raise PeerStartError(f"exited with status {proc.returncode} before it was ready: {_tail(log)}")
            with contextlib.suppress(aiohttp.ClientError, OSError, asyncio.TimeoutError):
                async with session.get(url + "/health", timeout=aiohttp.ClientTimeout(total=2)) as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(0.2)
    raise PeerStartError(f"not ready within {timeout_s:.0f} s: {_tail(log)}")


@contextlib.asynccontextmanager
async def peer_router(spec: PeerSpec, worker_urls: Sequence[str], log_path: Path, extra: Sequence[str] = (),
                      ready_timeout_s: float = 60.0) -> AsyncIterator[str]:
    """Yield the base URL of `spec` running in front of `worker_urls`; raises `PeerStartError`."""
    binary = spec.binary()
    if binary is None:
        raise PeerStartError(f"{spec.router} is not installed ({INSTALL_HINT})")
    port, metrics_port = free_port(), free_port()
    cmd = spec.command(binary, worker_urls, port, metrics_port, extra)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("w") as log:
        log.write("$ " + " ".join(cmd) + "\n")
        log.flush()
        try:
            proc = await asyncio.create_subprocess_exec(*cmd, stdout=log, stderr=asyncio.subprocess.STDOUT,
                                                        stdin=asyncio.subprocess.DEVNULL)
        except OSError as exc:
            raise PeerStartError(f"could not run {binary}: {exc}") from exc
        try:
            url = f"http://127.0.0.1:{port}"
            await _ready(url, proc, ready_timeout_s, log_path)
            yield url
        finally:
            await stop_process(proc, grace_s=5.0)
