"""What a bench run over a gateway fleet records besides the requests: the emulator's true load over time
(to measure later how far the load each replica routes on is from the servers' real running + waiting),
and the times of a rolling restart run while traffic flows."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

from gateway.bench.fleet.balancer import Fleet


@contextlib.asynccontextmanager
async def true_load_trace(engines: list[Any], started: float, time_scale: float,
                          period_s: float = 0.05) -> AsyncIterator[list[list[float]]]:
    """Every `period_s` wall seconds, [t (simulated s since `started`), then running and waiting of each engine
    in backend order] read straight from the emulated engines (what vLLM's `vllm:num_requests_running` /
    `_waiting` would say at that instant)."""
    rows: list[list[float]] = []

    async def sample() -> None:
        while True:
            t = (time.perf_counter() - started) / time_scale
            row = [round(t, 4)]
            for engine in engines:
                row += [len(engine.running), len(engine.waiting)]
            rows.append(row)
            await asyncio.sleep(period_s)

    task = asyncio.create_task(sample(), name="bench-true-load")
    try:
        yield rows
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def rolling_restart(fleet: Fleet, span_s: float, started: float, time_scale: float,
                          enabled: bool = True) -> AsyncIterator[list[dict[str, float]]]:
    """Restart each replica in turn, evenly spaced over `span_s` wall seconds, while the body runs;
    yields the record of each restart: replica, stop and ready times (simulated s since `started`). Restarts
    not done when the body ends still run, one after the other, before the context exits."""
    events: list[dict[str, float]] = []

    async def run() -> None:
        gap = span_s / (len(fleet.replicas) + 1)
        for index in range(len(fleet.replicas)):
            await asyncio.sleep(gap)
            stop = time.perf_counter()
            await fleet.restart(index)
            events.append({"replica": index, "stop_s": round((stop - started) / time_scale, 3),
                           "ready_s": round((time.perf_counter() - started) / time_scale, 3)})

    task = asyncio.create_task(run(), name="bench-rolling-restart") if enabled else None
    try:
        yield events
    except BaseException:
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        raise
    if task is not None:
        await task  # a restart under way finishes: every replica serves again when the run reads them
