"""`SPECGATE_WORKERS` > 1: the parent process keeps N workers serving one port (SO_REUSEPORT).

A worker that dies while the parent is not stopping (killed, out of memory, a crash) is logged, its Prometheus
multiprocess files are marked dead (`mark_process_dead`: its in-flight count and its `specgate_backend_up`
leave the merged values) and a new one is started, after a backoff that grows while workers die young
(`RESTART_DELAYS_S`). Workers that keep dying young (`MAX_QUICK_DEATHS` in a row) stop the whole gateway
rather than spin. SIGTERM/SIGINT are forwarded to every worker, which drains; the parent then exits with the
worst of their exit statuses, a death by signal N counted as 128 + N (as a shell reports it), except a death by
the very signal passed on (a worker still starting, before its handler was installed): that is a stop.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import multiprocessing.connection
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.context import SpawnProcess
from typing import Any

from prometheus_client import multiprocess

from gateway.logevents import log_event

log = logging.getLogger("specgate")
RESTART_DELAYS_S = (0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
STABLE_S = 30.0  # a worker that lived this long died of something else than a bad start: backoff resets
MAX_QUICK_DEATHS = 8  # in a row, each within STABLE_S of its start: not worth restarting any more


def exit_status(exitcode: int | None) -> int:
    """A process's exit as a shell reports it: the code, or 128 + N for a death by signal N."""
    if exitcode is None:
        return 1
    return 128 - exitcode if exitcode < 0 else exitcode


def describe(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        with contextlib.suppress(ValueError):
            return signal.Signals(-exitcode).name
    return f"exit {exitcode}"


@dataclass
class Slot:
    index: int
    proc: SpawnProcess | None = None
    started_at: float = 0.0
    restart_at: float | None = None


class Supervisor:
    def __init__(self, target: Callable[..., None], args: tuple[Any, ...], workers: int) -> None:
        self.target, self.args = target, args
        self.ctx = multiprocessing.get_context("spawn")
        self.slots = [Slot(i) for i in range(workers)]
        self.stopping = False
        self.forwarded: set[int] = set()  # the signals passed on to the workers
        self.status = 0
        self.quick_deaths = 0

    def start(self, slot: Slot) -> None:
        proc = self.ctx.Process(target=self.target, args=self.args, name=f"specgate-worker-{slot.index}")
        proc.start()
        slot.proc, slot.started_at, slot.restart_at = proc, time.monotonic(), None
        log_event(log, logging.INFO, "worker_started", worker=slot.index, pid=proc.pid)

    def forward(self, signum: int, _frame: object = None) -> None:
        """SIGTERM/SIGINT: stop restarting, pass the signal on; each worker drains and exits."""
        self.stopping = True
        self.forwarded.add(signum)
        for slot in self.slots:
            slot.restart_at = None
            if slot.proc is not None and slot.proc.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(slot.proc.pid, signum)

    def run(self) -> int:
        signal.signal(signal.SIGTERM, self.forward)
        signal.signal(signal.SIGINT, self.forward)
        for slot in self.slots:
            if not self.stopping:
                self.start(slot)
        while any(s.proc is not None or s.restart_at is not None for s in self.slots):
            sentinels = [s.proc.sentinel for s in self.slots if s.proc is not None]
            multiprocessing.connection.wait(sentinels, timeout=self._next_wake())
            now = time.monotonic()
            for slot in self.slots:
                if slot.proc is not None and not slot.proc.is_alive():
                    self.reap(slot, now)
                if slot.restart_at is not None and now >= slot.restart_at and not self.stopping:
                    self.start(slot)
        return self.status

    def _next_wake(self) -> float:
        times = [s.restart_at - time.monotonic() for s in self.slots if s.restart_at is not None]
        return min([0.5, *times]) if times else 0.5

    def reap(self, slot: Slot, now: float) -> None:
        proc = slot.proc
        assert proc is not None
        proc.join()
        slot.proc = None
        status = exit_status(proc.exitcode)
        if proc.pid is not None and os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            multiprocess.mark_process_dead(proc.pid)  # type: ignore[no-untyped-call]
        if self.stopping:
            if proc.exitcode is not None and -proc.exitcode in self.forwarded:
                status = 0  # the signal we passed on, caught before its handler was installed (a worker starting)
            self.status = max(self.status, status)
            if status != 0:
                log_event(log, logging.WARNING, "worker_exited", worker=slot.index, pid=proc.pid,
                          how=describe(proc.exitcode), status=status)
            return
        lived = now - slot.started_at
        self.quick_deaths = self.quick_deaths + 1 if lived < STABLE_S else 0
        delay = RESTART_DELAYS_S[min(self.quick_deaths, len(RESTART_DELAYS_S)) - 1] if self.quick_deaths else 0.0
        log_event(log, logging.ERROR, "worker_died", worker=slot.index, pid=proc.pid, how=describe(proc.exitcode),
                  status=status, lived_s=round(lived, 3), restart_in_s=delay)
        if self.quick_deaths >= MAX_QUICK_DEATHS:
            log_event(log, logging.ERROR, "workers_failing", deaths_in_a_row=self.quick_deaths)
            self.status = max(status, 1)
            self.forward(signal.SIGTERM)
            return
        slot.restart_at = now + delay
