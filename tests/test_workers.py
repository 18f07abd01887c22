"""`SPECGATE_WORKERS=2`: two processes on one port (SO_REUSEPORT), metrics merged across them."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest

from gateway.bench.kit.fake_vllm import FakePair
from gateway.bench.kit.procs import free_port
from gateway.supervisor import exit_status

pytestmark = pytest.mark.asyncio


async def test_two_workers_share_a_port_and_merge_metrics(fakes: FakePair, tmp_path: Path) -> None:
    base, spec = fakes
    port = free_port()
    env = {**os.environ, "SPECGATE_WORKERS": "2", "SPECGATE_PORT": str(port), "SPECGATE_POLICY": "baseline",
           "SPECGATE_BASELINE_URLS": base.url, "SPECGATE_SPECULATIVE_URLS": spec.url,
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "SPECGATE_LOG_REQUESTS": "false"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "gateway", "serve", env=env,
                                                stderr=asyncio.subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as s:
            for _ in range(100):
                try:
                    async with s.get(url + "/ready") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
            n = 40
            async def one() -> None:
                async with aiohttp.ClientSession() as c, c.post(url + "/v1/completions",
                                                                json={"model": "m", "prompt": "x"}) as r:
                    assert r.status == 200
            await asyncio.gather(*(one() for _ in range(n)))
            totals: list[float] = []
            for _ in range(200):  # whichever worker answers, the count is the sum over both (flushed every 0.5 s)
                async with s.get(url + "/metrics") as r:
                    text = await r.text()
                found = re.findall(r'^specgate_requests_total\{[^}]*status="200"\} (\S+)$', text, re.M)
                totals.append(sum(float(v) for v in found))
                if len(totals) >= 4 and totals[-4:] == [float(n)] * 4:
                    break
                await asyncio.sleep(0.05)  # recorded just after each response went out
        assert totals[-4:] == [float(n)] * 4, totals
        assert len(set(base.headers[i].get("x-request-id") for i in range(n))) == n
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)
    assert proc.returncode == 0


# --- issue 35, item 5: a dead worker is noticed, logged, replaced and marked dead; exit statuses kept


def _events(log_path: Path, event: str) -> list[dict[str, object]]:
    out = []
    for line in log_path.read_text(errors="replace").splitlines():
        if f'"event":"{event}"' in line.replace(" ", ""):
            with contextlib.suppress(ValueError):
                out.append(json.loads(line))
    return out


def _alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def _eventually(predicate: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.05)


async def _serve_two_workers(fakes: FakePair, tmp_path: Path, **env: str) -> tuple[asyncio.subprocess.Process,
                                                                                  str, Path, list[int]]:
    base, spec = fakes
    port = free_port()
    log_path = tmp_path / "gateway.log"
    prom = tmp_path / "prom"
    prom.mkdir()
    full = {**os.environ, "SPECGATE_WORKERS": "2", "SPECGATE_PORT": str(port), "SPECGATE_POLICY": "baseline",
            "SPECGATE_BASELINE_URLS": base.url, "SPECGATE_SPECULATIVE_URLS": spec.url,
            "PROMETHEUS_MULTIPROC_DIR": str(prom), "SPECGATE_LOG_REQUESTS": "false", **env}
    with log_path.open("wb") as stderr:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "gateway", "serve", env=full,
                                                    stderr=stderr)
    await _eventually(lambda: len(_events(log_path, "listening")) >= 2)
    pids = [int(str(e["pid"])) for e in _events(log_path, "listening")]
    return proc, f"http://127.0.0.1:{port}", log_path, pids


async def test_a_killed_worker_is_logged_replaced_and_marked_dead(fakes: FakePair, tmp_path: Path) -> None:
    """After SIGKILL of a worker nothing was logged or replaced, and its multiprocess files (in-flight requests,
    `specgate_backend_up`) stayed in the merged values."""
    proc, url, log_path, pids = await _serve_two_workers(fakes, tmp_path)
    try:
        victim = pids[0]
        await _eventually(lambda: any(p.name.endswith(f"_{victim}.db") and "live" in p.name
                                      for p in (tmp_path / "prom").iterdir()))
        os.kill(victim, signal.SIGKILL)
        await _eventually(lambda: any(e.get("pid") == victim and e.get("how") == "SIGKILL"
                                      for e in _events(log_path, "worker_died")))
        await _eventually(lambda: len(_events(log_path, "listening")) >= 3)
        replacement = int(str(_events(log_path, "listening")[-1]["pid"]))
        assert replacement not in pids and _alive(replacement)
        assert not [p.name for p in (tmp_path / "prom").iterdir() if p.name.endswith(f"_{victim}.db")
                    and p.name.startswith("gauge_live")]  # mark_process_dead: its live gauges are gone
        async with aiohttp.ClientSession() as s:
            for _ in range(10):
                async with s.post(url + "/v1/completions", json={"model": "m", "prompt": "x"}) as r:
                    assert r.status == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)
    assert proc.returncode == 0


async def test_a_worker_killed_while_draining_makes_the_parent_exit_137(fakes: FakePair, tmp_path: Path) -> None:
    """`max(p.exitcode or 0)` mapped a worker's -9 to 0 when the other worker exited cleanly."""
    fakes[0].mode = "hang"
    proc, url, _, pids = await _serve_two_workers(fakes, tmp_path, SPECGATE_DRAIN_TIMEOUT_S="60")
    async with aiohttp.ClientSession() as s:
        held = asyncio.create_task(s.post(url + "/v1/completions", json={"model": "m", "prompt": "x"}))
        await _eventually(lambda: fakes[0].calls >= 1)
        proc.send_signal(signal.SIGTERM)
        await _eventually(lambda: sum(_alive(p) for p in pids) == 1)  # the idle one drained at once
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # the one still draining its hung request
        await asyncio.wait_for(proc.wait(), 30)
        held.cancel()
        with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
            await held
    assert proc.returncode == 128 + signal.SIGKILL


async def test_exit_statuses_count_a_death_by_signal_as_128_plus_its_number() -> None:
    assert [exit_status(c) for c in (0, 1, -9, -15, None)] == [0, 1, 137, 143, 1]
