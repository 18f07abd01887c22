"""Load for a real-GPU run: open-loop arrivals (the low phase) and c concurrent streams (the high phase)."""

from __future__ import annotations

import argparse
import asyncio
import time

import aiohttp

from gateway.bench.replay.client import Measured, prepare_body, replay, send_one
from gateway.workloads import WorkloadItem


async def closed_loop(items: list[WorkloadItem], url: str, model: str, conc: int, timeout_s: float,
                      deadline: float) -> list[Measured]:
    queue: asyncio.Queue[WorkloadItem] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    results: list[Measured] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None)) as session:
        start = time.perf_counter()

        async def worker() -> None:
            while not queue.empty() and time.monotonic() < deadline:
                item = queue.get_nowait()
                now = time.perf_counter() - start
                out = Measured(item.id, item.kind, sent_at_s=now, lateness_s=0.0)
                results.append(await send_one(session, url, item, prepare_body(item, model), out, timeout_s))

        await asyncio.gather(*(worker() for _ in range(conc)))
    return results


async def open_loop(items: list[WorkloadItem], url: str, model: str, timeout_s: float) -> list[Measured]:
    return await replay(items, url, model, 1.0, timeout_s=timeout_s)


async def run_phase(kind: str, items: list[WorkloadItem], url: str, args: argparse.Namespace,
                    deadline: float) -> tuple[list[Measured], float]:
    t = time.monotonic()
    if kind == "low":
        rows = await asyncio.wait_for(open_loop(items, url, args.model, args.request_timeout_s),
                                      timeout=max(5.0, deadline - time.monotonic()))
    else:
        rows = await closed_loop(items, url, args.model, args.high_conc, args.request_timeout_s, deadline)
    return rows, time.monotonic() - t
