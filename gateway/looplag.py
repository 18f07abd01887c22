"""The event loop's own lag, measured: a task that sleeps `tick_s` over and over and adds up how late it wakes.
Code that times something on the loop takes a `reading()` before and after; the difference is how long the loop did
not run in between (`gateway.core.stall` decides what that excuses)."""

from __future__ import annotations

import asyncio
import logging
import time

from gateway.core.stall import lag_reading, oversleep, timeout_counts
from gateway.logevents import log_event

TICK_S = 0.1

log = logging.getLogger("specgate.looplag")


class LoopLag:
    def __init__(self, tick_s: float = TICK_S) -> None:
        self.tick_s = tick_s
        self.recorded_s = 0.0  # the lag summed at the monitor's wakes (`reading` adds the sleep under way)
        self._asleep_since = time.monotonic()
        self._running = False  # a monitor that does not run measures nothing (its sleep would read as lag)

    @property
    def running(self) -> bool:
        return self._running

    def reading(self) -> float:
        """The loop's total lag so far (seconds); nondecreasing while the monitor runs."""
        if not self._running:
            return self.recorded_s
        return lag_reading(self.recorded_s, self._asleep_since, self.tick_s, time.monotonic())

    def excuses(self, what: str, backend: str, timeout_s: float, started: float, lag_before: float) -> bool:
        """Whether a timeout of `what` on `backend` (begun at `started`, when the lag read `lag_before`) is the loop's
        doing: the loop lagged through a comparable part of it (`timeout_counts`). Logged when it is."""
        elapsed, lag = time.monotonic() - started, self.reading() - lag_before
        if timeout_counts(timeout_s, elapsed, lag):
            return False
        log_event(log, logging.WARNING, "timeout_not_counted", what=what, backend=backend, loop_stall_s=round(lag, 3),
                  elapsed_s=round(elapsed, 3), timeout_s=timeout_s,
                  why=f"{what} timed out during a stall of the gateway's own event loop: not counted")
        return True

    async def run(self) -> None:
        self._asleep_since = time.monotonic()
        self._running = True
        try:
            while True:
                await asyncio.sleep(self.tick_s)
                now = time.monotonic()
                self.recorded_s += oversleep(self.tick_s, now - self._asleep_since)
                self._asleep_since = now
        finally:
            self._running = False
