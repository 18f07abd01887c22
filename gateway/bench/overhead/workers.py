"""1 vs N gateway processes under `specgate bench-overhead --workers N`."""

from __future__ import annotations

from typing import Any

from gateway.bench.overhead.bench import Bench
from gateway.bench.overhead.procs import http_json


def metrics_requests_total(url: str) -> float:
    text = http_json(url + "/metrics")
    return sum(float(line.rsplit(" ", 1)[1]) for line in str(text).splitlines()
               if line.startswith("specgate_requests_total{"))


def measure_workers(bench: Bench, n: int) -> dict[str, Any]:
    """Throughput of 1 vs n gateway processes, both unpinned (n processes need n CPUs); then checks that
    specgate_requests_total from the multi-process gateway counts every request sent to it."""
    targets = [bench.start_specgate("specgate-w1"), bench.start_specgate(f"specgate-w{n}", workers=n)]
    points = bench.measure_points(targets, [64])
    ratios, cpu = [], []
    for mode in ("plain", "stream"):
        rps = {p["target"]: p["median"]["rps"] for p in points if p["mode"] == mode}
        if rps.get("specgate-w1") and rps.get(f"specgate-w{n}"):
            ratios.append(rps[f"specgate-w{n}"] / rps["specgate-w1"])
        ms = {p["target"]: p["median"]["cpu_ms_per_req"] for p in points if p["mode"] == mode}
        cpu.append(f"{mode} {ms.get('specgate-w1') or 0:.2f} vs {ms.get(f'specgate-w{n}') or 0:.2f}")
    counted = metrics_requests_total(targets[1].url)
    expected = bench.sent.get(targets[1].name, 0)
    note = (f"specgate with 1 and with {n} worker processes, both unpinned (all CPUs shared with the load "
            f"generator and backends), c=64; scaling = min over modes of req/s ratio "
            f"({', '.join(f'{r:.2f}x' for r in ratios)}); CPU ms per request, 1 vs {n} workers: {'; '.join(cpu)}. "
            f"On 2 cores the load generator and backends need a core of their own, so a second worker has little "
            f"idle CPU to scale into. Learned state is per process (each worker learns "
            f"from the requests it serves). Metrics: specgate_requests_total over all workers = {counted:.0f}, "
            f"requests sent = {expected}.")
    for t in targets:
        assert t.proc is not None
        t.proc.stop()
    return {"n": n, "points": points, "scaling": min(ratios) if ratios else None, "metrics_counted": counted,
            "metrics_expected": expected, "metrics_ok": counted == expected, "note": note}
