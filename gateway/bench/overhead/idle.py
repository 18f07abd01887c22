"""`python -m gateway.bench.overhead.idle`: a gateway's CPU a second with no traffic, for fleets of each size.

What a fleet costs without any request: health checks and the load read every `SPECGATE_LOAD_SCRAPE_INTERVAL_S`
from every backend. Charged per request, that fixed cost is (ms a second) / (requests a second).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import psutil

from gateway.bench.kit.procs import free_port


def cpu_ms_per_s(pid: int, seconds: float) -> float:
    proc = psutil.Process(pid)
    before, t0 = sum(proc.cpu_times()[:2]), time.monotonic()
    time.sleep(seconds)
    return float(1000 * (sum(proc.cpu_times()[:2]) - before) / (time.monotonic() - t0))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backends", default="2,16", help="fleet sizes, half baseline and half speculative")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10.0)
    args = p.parse_args(argv)
    sizes = [int(n) for n in args.backends.split(",")]
    ports = {role: free_port() for role in ("baseline", "speculative")}
    servers = [subprocess.Popen([sys.executable, "-m", "gateway.bench.overhead.backend", "--port", str(port),
                                 "--role", role], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for role, port in ports.items()]
    results: dict[int, list[float]] = {n: [] for n in sizes}
    try:
        time.sleep(2.0)  # the backends bind
        for _ in range(args.rounds):
            for n in sizes:
                port = free_port()
                env = {**os.environ, "SPECGATE_PORT": str(port), "SPECGATE_HOST": "127.0.0.1"}
                for role, backend in ports.items():  # n // 2 entries each, all pointing at one server
                    env[f"SPECGATE_{role.upper()}_URLS"] = ",".join([f"http://127.0.0.1:{backend}"] * max(n // 2, 1))
                gateway = subprocess.Popen([sys.executable, "-m", "gateway", "serve"], env=env,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                try:
                    time.sleep(4.0)  # started, first health checks and scrapes done
                    results[n].append(cpu_ms_per_s(gateway.pid, args.seconds))
                finally:
                    gateway.terminate()
                    gateway.wait(20)
    finally:
        for server in servers:
            server.terminate()
    for n, values in results.items():
        print(f"{n:3d} backends: " + ", ".join(f"{v:.1f}" for v in values) + " ms of CPU a second, idle")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
