"""`python -m gateway.bench.fleet.load_error`: how far the load each gateway replica routes on is from the truth.

N gateway apps (in this process, each with its own pool and learner, as N replicas would be) in front of one
emulated fleet; a closed loop of `--concurrency` streams spread over the replicas round robin. Every 50 ms
(simulated clock of the emulator), each replica's routing load of each backend is compared with the
emulated server's true running + waiting. Reported: the median and p90 absolute error per replica count,
against the gateway's own in-flight count (what every replica routed on before it read the servers).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from gateway.emulator import EmulatedFleet, parse_layout
from gateway.settings import Settings
from gateway.state import AppState
from gateway.workloads.items import load_workload


async def _start(settings: Settings) -> tuple[web.AppRunner, str, AppState]:
    app = create_app(settings, registry=CollectorRegistry())
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}", app[AppState.key]


async def measure(replicas: int, concurrency: int, duration_s: float, layout: str, time_scale: float) -> dict[str, Any]:
    items = load_workload("mixed-medium")
    async with EmulatedFleet(parse_layout(layout), time_scale=time_scale) as fleet:
        fleet.register_references({i.id: i.reference for i in items if i.reference is not None})
        settings = Settings(backends=fleet.backends_setting().split(","), log_requests=False, random_seed=1,
                            scrape_interval_s=2.0, load_scrape_interval_s=0.25, policy="least_loaded")
        started = [await _start(settings) for _ in range(replicas)]
        errors: list[float] = []
        own_errors: list[float] = []
        stop = time.monotonic() + duration_s
        feed = itertools.cycle(items)
        urls = itertools.cycle([u for _, u, _ in started])
        try:
            async with aiohttp.ClientSession() as session:
                async def worker() -> None:
                    while time.monotonic() < stop:
                        item = next(feed)
                        body = {**item.body, "model": "specgate-emu", "stream": False}
                        async with session.post(next(urls) + item.endpoint, json=body,
                                                headers={"x-request-id": item.id}) as r:
                            await r.read()

                async def sampler() -> None:
                    while time.monotonic() < stop:
                        await asyncio.sleep(0.05 * time_scale)
                        now = time.monotonic()
                        for _, _, state in started:
                            for b, server in zip(state.pool.backends, fleet.servers, strict=True):
                                true = len(server.server.engine.running) + len(server.server.engine.waiting)
                                errors.append(abs(state.pool.load(b, now) - true))
                                own_errors.append(abs(b.inflight - true))

                await asyncio.gather(sampler(), *(worker() for _ in range(concurrency)))
        finally:
            for runner, _, _ in started:
                await runner.cleanup()

    def q(xs: list[float], p: float) -> float:
        return sorted(xs)[int(p * (len(xs) - 1))] if xs else float("nan")

    return {"replicas": replicas, "concurrency": concurrency, "samples": len(errors),
            "median_abs_error": statistics.median(errors), "p90_abs_error": q(errors, 0.9),
            "own_inflight_median_abs_error": statistics.median(own_errors),
            "own_inflight_p90_abs_error": q(own_errors, 0.9)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gateway.bench.fleet.load_error", description=__doc__)
    p.add_argument("--replicas", default="1,2,4")
    p.add_argument("--concurrency", type=int, default=48)
    p.add_argument("--duration-s", type=float, default=20.0)
    p.add_argument("--fleet", default="baseline,speculative")
    p.add_argument("--time-scale", type=float, default=1.0)
    p.add_argument("--out", type=Path, default=Path("results/load-error.json"))
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)
    rows = [asyncio.run(measure(int(n), args.concurrency, args.duration_s, args.fleet, args.time_scale))
            for n in args.replicas.split(",")]
    doc = {"date": datetime.now(UTC).isoformat(timespec="seconds"), "fleet": args.fleet,
           "command": "python -m gateway.bench.fleet.load_error " + " ".join(argv), "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    for r in rows:
        print(f"{r['replicas']} replica(s), c={r['concurrency']}: routing load error median "
              f"{r['median_abs_error']:.2f} p90 {r['p90_abs_error']:.2f} requests ({r['samples']} samples); "
              f"own in-flight count: median {r['own_inflight_median_abs_error']:.2f} "
              f"p90 {r['own_inflight_p90_abs_error']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
