"""The fault scenarios, the abort latency and the soak: each a fresh system under load."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import psutil

from gateway.bench.faults.backend import CHAT, WIRE_MODES
from gateway.bench.faults.load import Tally, closed_loop, request_body
from gateway.bench.faults.system import system
from gateway.bench.kit.metrics import scrape_sum

SCENARIOS: dict[str, str] = {
    "no_fault": "control: nothing injected",
    "kill_backend": "SIGKILL the baseline backend process 1 s in",
    "hang": "the baseline accepts and never answers (first-byte timeout 1 s)",
    "garbage_sse": "the baseline streams one event, then bytes that are not SSE (streams only)",
    "truncated_sse": "the baseline closes the connection half-way through each stream (streams only)",
    "flaky_500": "the baseline answers 500 to every other request",
    "client_disconnects": "clients leave before the first token, mid-stream and during unary requests",
    # issue 35: a backend that misbehaves on the wire (its completions), or on its /metrics page
    **{name: f"the baseline's completions: {what}" for name, what in WIRE_MODES.items()},
    "metrics_hang": "the baseline's /metrics never answers",
    "metrics_huge": "the baseline's /metrics is 8 MiB (over the scrape cap)",
    "metrics_endless_headers": "the baseline's /metrics sends headers that never end",
}


async def run_scenario(name: str, seconds: float, concurrency: int, log_dir: Path) -> dict[str, Any]:
    tally = Tally()
    extra: dict[str, Any] = {}
    async with system(log_dir, name) as (base, _spec, url, gw), aiohttp.ClientSession() as ctl:
        stream_share = 1.0 if name in ("garbage_sse", "truncated_sse") else 0.5
        leave_share = 1.0 if name == "client_disconnects" else 0.0
        if name == "client_disconnects":
            await base.call(ctl, chunks=40, chunk_delay_s=0.02, first_delay_s=0.2)
        load = asyncio.create_task(closed_loop(url, seconds, concurrency, tally, stream_share, leave_share))
        await asyncio.sleep(1.0)
        if name == "kill_backend":
            await base.kill()
        elif name in ("hang", "flaky_500", "garbage_sse", "truncated_sse"):
            mode = {"hang": "hang", "flaky_500": "flaky", "garbage_sse": "garbage", "truncated_sse": "truncate"}
            await base.call(ctl, mode=mode[name])
        elif name in WIRE_MODES:
            await base.call(ctl, mode=name)
        elif name.startswith("metrics_"):
            await base.call(ctl, metrics_mode=name.removeprefix("metrics_"))
        rss = [gw.memory_info().rss]
        while not load.done():  # the gateway's memory while the fault lasts
            await asyncio.wait({load}, timeout=0.25)
            rss.append(gw.memory_info().rss)
        await load
        extra["gateway_rss_mb_at_fault_start"] = round(rss[0] / 2**20, 1)
        extra["gateway_rss_mb_peak"] = round(max(rss) / 2**20, 1)
        await asyncio.sleep(0.5)
        extra["gateway_failovers_total"] = await scrape_sum(url, "specgate_failovers_total")
        extra["gateway_ejections_total"] = await scrape_sum(url, "specgate_backend_ejections_total")
        if name == "client_disconnects":
            stats = await base.call(ctl)
            extra["backend_saw_aborts"] = len(stats["aborts"])
        with contextlib.suppress(aiohttp.ClientError, OSError):
            extra["baseline_backend"] = await base.call(ctl)
            extra["baseline_backend"].pop("aborts", None)
    return {"scenario": name, "fault": SCENARIOS[name], "seconds": seconds, "concurrency": concurrency,
            **asdict(tally), **extra}


async def abort_latency(log_dir: Path, n: int = 30) -> dict[str, Any]:
    """Client closes the socket; how long until the backend process sees the upstream request aborted."""
    out: dict[str, list[float]] = {}
    async with system(log_dir, "abort-latency") as (base, _spec, url, _gw), aiohttp.ClientSession() as ctl:
        host, port = url.removeprefix("http://").split(":")
        for case in ("before_first_token", "mid_stream", "unary"):
            await base.call(ctl, chunks=200, chunk_delay_s=0.02, first_delay_s=5.0 if case == "before_first_token"
                            else 0.0)
            delays = []
            for _ in range(n):
                before = len((await base.call(ctl))["aborts"])
                payload = orjson.dumps(request_body(case != "unary"))
                reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
                if case == "mid_stream":
                    got = b""
                    while got.count(b"data: ") < 2:
                        got += await asyncio.wait_for(reader.read(4096), 5)
                else:
                    await asyncio.sleep(0.15)
                t_close = time.monotonic()
                writer.transport.abort()
                aborts: list[float] = []
                for _ in range(200):
                    aborts = (await base.call(ctl))["aborts"]
                    if len(aborts) > before:
                        break
                    await asyncio.sleep(0.005)
                delays.append((aborts[-1] - t_close) * 1000 if len(aborts) > before else float("inf"))
            out[case] = sorted(delays)
    return {case: {"n": len(d), "p50_ms": round(d[len(d) // 2], 1), "max_ms": round(d[-1], 1),
                   "under_200ms": sum(x < 200 for x in d)} for case, d in out.items()}


def _sample(proc: psutil.Process) -> dict[str, float]:
    with proc.oneshot():
        conns = proc.net_connections(kind="tcp")
        return {"t": round(time.time(), 1), "rss_mb": round(proc.memory_info().rss / 2**20, 2),
                "tcp_connections": len(conns),
                "tcp_established": sum(c.status == psutil.CONN_ESTABLISHED for c in conns),
                "tcp_close_wait": sum(c.status == psutil.CONN_CLOSE_WAIT for c in conns),
                "fds": proc.num_fds(), "threads": proc.num_threads()}


async def soak(seconds: float, concurrency: int, log_dir: Path) -> dict[str, Any]:
    tally = Tally()
    async with system(log_dir, "soak") as (_base, _spec, url, gw):
        await closed_loop(url, 10.0, concurrency, Tally(), leave_share=0.1, seed=1)  # warm-up, not counted
        await asyncio.sleep(2.0)
        before = _sample(gw)
        samples = [before]
        load = asyncio.create_task(closed_loop(url, seconds, concurrency, tally, leave_share=0.1, seed=2))
        while not load.done():
            await asyncio.wait({load}, timeout=min(30.0, max(seconds / 10, 1.0)))
            samples.append(_sample(gw))
        await asyncio.sleep(3.0)  # let closed connections and cancelled requests settle
        after = _sample(gw)
        samples.append(after)
        failovers = await scrape_sum(url, "specgate_failovers_total")
    return {"seconds": seconds, "concurrency": concurrency, "client_leave_share": 0.1, **asdict(tally),
            "requests_per_s": round(tally.sent / seconds, 1), "gateway_failovers_total": failovers,
            "before": before, "after": after, "rss_growth_mb": round(after["rss_mb"] - before["rss_mb"], 2),
            "samples": samples}
