"""Processes of `specgate bench-overhead`: start pinned subprocesses, wait for them, measure CPU and RSS."""

from __future__ import annotations

import contextlib
import os
import resource
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
import psutil


def _preexec(cpus: set[int] | None, nice: int) -> Callable[[], None]:
    def setup() -> None:
        if nice:
            os.nice(nice)
        if cpus:
            os.sched_setaffinity(0, cpus)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = hard if hard != resource.RLIM_INFINITY else 65536
        if soft < want:
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

    return setup


@dataclass
class Proc:
    """One started subprocess (and its children): CPU seconds and RSS are summed over the tree."""

    name: str
    popen: subprocess.Popen[bytes]
    log_path: Path | None = None
    _ps: psutil.Process = field(init=False)

    def __post_init__(self) -> None:
        self._ps = psutil.Process(self.popen.pid)

    def tree(self) -> list[psutil.Process]:
        try:
            return [self._ps, *self._ps.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu_s(self) -> float:
        total = 0.0
        for p in self.tree():
            with contextlib.suppress(psutil.NoSuchProcess):
                t = p.cpu_times()
                total += t.user + t.system
        return total

    def rss_mb(self) -> float:
        total = 0
        for p in self.tree():
            with contextlib.suppress(psutil.NoSuchProcess):
                total += p.memory_info().rss
        return total / 2**20

    def log_tail(self, lines: int = 30) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self, timeout: float = 10.0) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                for p in reversed(self.tree()):
                    with contextlib.suppress(psutil.NoSuchProcess):
                        p.kill()
                self.popen.wait(5)


def start(name: str, args: list[str], *, cpus: set[int] | None, env: dict[str, str] | None = None,
          log_dir: Path, stdin: int | None = None, stdout: int | IO[bytes] | None = None, nice: int = 0) -> Proc:
    log_path = log_dir / f"{name}.log"
    with log_path.open("wb") as log:
        popen = subprocess.Popen(
            [sys.executable, *args], env={**os.environ, **(env or {})}, stdin=stdin,
            stdout=stdout if stdout is not None else log, stderr=log, preexec_fn=_preexec(cpus, nice),
        )
    return Proc(name, popen, log_path)


def wait_http(proc: Proc, url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.popen.poll() is not None:
            raise RuntimeError(f"{proc.name} exited with {proc.popen.returncode}:\n{proc.log_tail()}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=1.0) as r:
            if r.status == 200:
                return
        time.sleep(0.1)
    raise RuntimeError(f"{proc.name} not ready at {url} after {timeout:.0f}s:\n{proc.log_tail()}")


def http_json(url: str, body: dict[str, Any] | None = None) -> Any:
    data = orjson.dumps(body) if body is not None else None
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10.0) as r:
        return orjson.loads(r.read()) if "json" in r.headers.get("content-type", "") else r.read().decode()


class PeakRss:
    """Samples a process tree's RSS in a thread while a block runs: `peak_mb`, `samples`."""

    def __init__(self, proc: Proc, interval_s: float = 0.1) -> None:
        self.proc, self.interval_s = proc, interval_s
        self.peak_mb = 0.0
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._t0 = 0.0

    def _loop(self) -> None:
        while not self._stop.is_set():
            rss = self.proc.rss_mb()
            self.samples.append((time.monotonic() - self._t0, rss))
            self.peak_mb = max(self.peak_mb, rss)
            self._stop.wait(self.interval_s)

    def __enter__(self) -> PeakRss:
        self._t0 = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join()


class LoadGen:
    """The long-lived load generator process: one JSON job in, one JSON result out."""

    def __init__(self, cpus: set[int] | None, log_dir: Path, nice: int = 0) -> None:
        self.proc = start("loadgen", ["-m", "gateway.bench.overhead.load"], cpus=cpus, log_dir=log_dir,
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, nice=nice)

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        p = self.proc.popen
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write(orjson.dumps(job) + b"\n")
        p.stdin.flush()
        line = p.stdout.readline()
        if not line:
            raise RuntimeError(f"load generator died:\n{self.proc.log_tail()}")
        result: dict[str, Any] = orjson.loads(line)
        return result

    def stop(self) -> None:
        p = self.proc.popen
        if p.stdin is not None:
            with contextlib.suppress(OSError):
                p.stdin.close()
        self.proc.stop()
