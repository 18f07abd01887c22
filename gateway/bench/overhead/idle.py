"""`python -m gateway.bench.overhead.idle`: a gateway's CPU a second with no traffic, for fleets of each size.

What a fleet costs without any request: health checks and the load read every `SPECGATE_LOAD_SCRAPE_INTERVAL_S`
from every backend. Charged per request, that fixed cost is (ms a second) / (requests a second).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from gateway.bench.kit.procs import free_port
from gateway.bench.overhead.procs import Proc, start, wait_http


def cpu_ms_per_s(proc: Proc, seconds: float) -> float:
    before, t0 = proc.cpu_s(), time.monotonic()
    time.sleep(seconds)
    return 1000 * (proc.cpu_s() - before) / (time.monotonic() - t0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--backends", default="2,16", help="fleet sizes, half baseline and half speculative")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seconds", type=float, default=10.0)
    args = p.parse_args(argv)
    sizes = [int(n) for n in args.backends.split(",")]
    results: dict[int, list[float]] = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory(prefix="specgate-idle-") as logs:
        log_dir = Path(logs)
        urls: dict[str, str] = {}
        servers: list[Proc] = []
        try:
            for role in ("baseline", "speculative"):
                port = free_port()
                servers.append(start(f"backend-{role}", ["-m", "gateway.bench.overhead.backend", "--port", str(port),
                                                         "--role", role], cpus=None, log_dir=log_dir))
                urls[role] = f"http://127.0.0.1:{port}"
                wait_http(servers[-1], urls[role] + "/health")
            for _ in range(args.rounds):
                for n in sizes:
                    port = free_port()
                    env = {"SPECGATE_PORT": str(port), "SPECGATE_HOST": "127.0.0.1"}
                    for role, url in urls.items():  # n // 2 entries each, all pointing at one server
                        env[f"SPECGATE_{role.upper()}_URLS"] = ",".join([url] * max(n // 2, 1))
                    gateway = start(f"specgate-{n}", ["-m", "gateway", "serve"], cpus=None, env=env, log_dir=log_dir)
                    try:
                        wait_http(gateway, f"http://127.0.0.1:{port}/health")
                        time.sleep(2.0)  # the first health checks and scrapes are done
                        results[n].append(cpu_ms_per_s(gateway, args.seconds))
                    finally:
                        gateway.stop()
        finally:
            for server in servers:
                server.stop()
    for n, values in results.items():
        print(f"{n:3d} backends: " + ", ".join(f"{v:.1f}" for v in values) + " ms of CPU a second, idle")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
