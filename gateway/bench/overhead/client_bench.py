"""CPU per upstream exchange: aiohttp's `ClientSession` against the completion path's `UpstreamClient`.

Starts the zero-delay bench backend on CPU 0, then runs each client in this process on CPU 1 (uvloop, 64
concurrent exchanges of a small JSON POST, the answer read whole), alternating, and prints the process CPU per
exchange. This is the measurement behind `gateway/h1client.py`.

    python -m gateway.bench.overhead.client_bench --requests 5000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable

import aiohttp

from gateway.h1client import UpstreamClient

BODY = b'{"model":"specgate-bench","messages":[{"role":"user","content":"hello there"}],"max_tokens":16}'
HEADERS = {"Content-Type": "application/json", "x-request-id": "abc", "Accept-Encoding": "identity"}
PATH = "/v1/chat/completions"


async def _closed_loop(one: Callable[[], Awaitable[None]], n: int, concurrency: int) -> float:
    """CPU seconds of this process per exchange over `n` exchanges (after as many unmeasured ones)."""
    left = [n]

    async def worker() -> None:
        while left[0] > 0:
            left[0] -= 1
            await one()

    await asyncio.gather(*[worker() for _ in range(concurrency)])  # warm-up
    left[0] = n
    t0 = time.process_time()
    await asyncio.gather(*[worker() for _ in range(concurrency)])
    return (time.process_time() - t0) / n


async def measure(kind: str, url: str, n: int, concurrency: int) -> float:
    if kind == "aiohttp":
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), auto_decompress=True,
                                        skip_auto_headers=("User-Agent",), cookie_jar=aiohttp.DummyCookieJar())

        async def via_session() -> None:
            async with session.post(url + PATH, data=BODY, headers=HEADERS, allow_redirects=False) as r:
                await r.read()

        try:
            return await _closed_loop(via_session, n, concurrency)
        finally:
            await session.close()
    client = UpstreamClient(limit_per_origin=1024, connect_timeout_s=2.0, total_timeout_s=600.0)

    async def via_client() -> None:
        r = await client.post(url, PATH, BODY, HEADERS)
        try:
            await r.read(1 << 20)
        finally:
            r.close()

    try:
        return await _closed_loop(via_client, n, concurrency)
    finally:
        await client.close()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.bench.overhead.client_bench", description=__doc__)
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args(argv)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = subprocess.Popen([sys.executable, "-m", "gateway.bench.overhead.backend", "--port", str(port)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
            os.sched_setaffinity(backend.pid, {0})
            os.sched_setaffinity(0, {1})
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        try:
            import uvloop

            uvloop.install()
        except ImportError:
            pass
        results: dict[str, list[float]] = {"aiohttp": [], "h1client": []}
        for _ in range(args.rounds):
            for kind in results:
                results[kind].append(asyncio.run(measure(kind, url, args.requests, args.concurrency)))
        for kind, values in results.items():
            us = sorted(v * 1e6 for v in values)
            print(f"{kind:9s} CPU per exchange: median {statistics.median(us):6.1f} µs (min {us[0]:.1f}, "
                  f"max {us[-1]:.1f}) over {args.rounds} rounds of {args.requests}")
    finally:
        backend.terminate()
        backend.wait(timeout=10)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
