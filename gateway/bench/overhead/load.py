"""Closed-loop load generator for `specgate bench-overhead`: a long-lived process that reads one JSON job
per stdin line and answers one JSON result per stdout line (so it starts, and is pinned, once).

Job: {"url", "path", "body", "stream", "concurrency", "requests", "warmup"}; it answers
{"wall_s", "latencies_s", "ttfts_s", "errors", "error_sample"}. Each of `concurrency` workers sends its
next request as soon as the previous one is fully read. Latency is send -> last byte; TTFT is send ->
first body bytes of a stream. `{"hold": N, ...}` opens N streams at once instead and reports how many
were open together.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from typing import Any

import aiohttp
import orjson


class Run:
    def __init__(self, job: dict[str, Any]) -> None:
        self.url = job["url"].rstrip("/") + job["path"]
        self.body = job["body"].encode()
        self.stream = bool(job["stream"])
        self.headers = {"Content-Type": "application/json"}
        self.latencies: list[float] = []
        self.ttfts: list[float] = []
        self.errors = 0
        self.error_sample = ""
        self.open = 0
        self.max_open = 0

    async def one(self, session: aiohttp.ClientSession, record: bool) -> None:
        t0 = time.perf_counter()
        ttft = None
        try:
            async with session.post(self.url, data=self.body, headers=self.headers) as resp:
                if self.stream:
                    last = b""
                    first = True
                    while chunk := await resp.content.readany():
                        if first:
                            ttft = time.perf_counter() - t0
                            first = False
                            self.open += 1
                            self.max_open = max(self.max_open, self.open)
                        last = chunk
                    if not first:
                        self.open -= 1
                    ok = resp.status == 200 and last.endswith(b"data: [DONE]\n\n")
                else:
                    data = await resp.read()
                    ok = resp.status == 200 and data.startswith(b"{")
                if not ok:
                    self._error(f"status {resp.status}")
                    return
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            self._error(f"{type(exc).__name__}: {exc}")
            return
        if record:
            self.latencies.append(time.perf_counter() - t0)
            if ttft is not None:
                self.ttfts.append(ttft)

    def _error(self, what: str) -> None:
        self.errors += 1
        if not self.error_sample:
            self.error_sample = what[:200]


async def closed_loop(run: Run, session: aiohttp.ClientSession, concurrency: int, requests: int,
                      record: bool) -> float:
    left = requests

    async def worker() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            await run.one(session, record)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(concurrency, max(requests, 1)))))
    return time.perf_counter() - t0


async def run_job(job: dict[str, Any]) -> dict[str, Any]:
    run = Run(job)
    hold = int(job.get("hold", 0))
    concurrency = hold or int(job["concurrency"])
    connector = aiohttp.TCPConnector(limit=0 if hold else concurrency, force_close=False)
    timeout = aiohttp.ClientTimeout(total=float(job.get("timeout_s", 300)))
    async with aiohttp.ClientSession(connector=connector, timeout=timeout, auto_decompress=False) as session:
        if hold:
            t0 = time.perf_counter()
            await asyncio.gather(*(run.one(session, True) for _ in range(hold)))
            wall = time.perf_counter() - t0
        else:
            if job.get("warmup"):
                await closed_loop(run, session, concurrency, int(job["warmup"]), record=False)
            wall = await closed_loop(run, session, concurrency, int(job["requests"]), record=True)
    return {"wall_s": wall, "latencies_s": run.latencies, "ttfts_s": run.ttfts, "errors": run.errors,
            "error_sample": run.error_sample, "max_open": run.max_open}


def main() -> int:
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    loop = asyncio.new_event_loop()
    for line in sys.stdin:
        if not line.strip():
            continue
        result = loop.run_until_complete(run_job(orjson.loads(line)))
        sys.stdout.write(orjson.dumps(result).decode() + "\n")
        sys.stdout.flush()
    loop.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
