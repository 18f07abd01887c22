"""Pure arithmetic of `specgate bench-overhead`: per-run summaries, medians over repeats, the overhead targets."""

from __future__ import annotations

import math
import statistics
from typing import Any

METRICS = ("rps", "p50_ms", "p99_ms", "ttft_p50_ms", "ttft_p99_ms", "cpu_ms_per_req", "rss_before_mb",
           "rss_after_mb", "added_p50_ms", "added_ttft_p50_ms")


def percentile(values: list[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def _ms(value: float | None) -> float | None:
    return None if value is None else value * 1000


def summarize(result: dict[str, Any], requests_sent: int, cpu_s: float | None, rss_before: float | None,
              rss_after: float | None) -> dict[str, Any]:
    """One run: the load generator's answer plus the target's CPU seconds over every request sent."""
    lat, ttft = result["latencies_s"], result["ttfts_s"]
    return {
        "requests": len(lat), "errors": result["errors"], "error_sample": result["error_sample"],
        "wall_s": result["wall_s"], "rps": len(lat) / result["wall_s"] if result["wall_s"] > 0 else None,
        "p50_ms": _ms(percentile(lat, 50)), "p99_ms": _ms(percentile(lat, 99)),
        "ttft_p50_ms": _ms(percentile(ttft, 50)), "ttft_p99_ms": _ms(percentile(ttft, 99)),
        "cpu_ms_per_req": cpu_s / requests_sent * 1000 if cpu_s is not None and requests_sent else None,
        "rss_before_mb": rss_before, "rss_after_mb": rss_after,
    }


def add_paired_deltas(runs: list[dict[str, Any]], direct: list[dict[str, Any]]) -> None:
    """Added latency vs direct, paired by repeat (each repeat ran the targets back to back)."""
    for run, base in zip(runs, direct, strict=False):
        for name, key in (("added_p50_ms", "p50_ms"), ("added_ttft_p50_ms", "ttft_p50_ms")):
            if run.get(key) is not None and base.get(key) is not None:
                run[name] = run[key] - base[key]


def aggregate(runs: list[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """Median and min–max of every metric over the repeats."""
    out: dict[str, dict[str, float | None]] = {"median": {}, "min": {}, "max": {}}
    for m in METRICS:
        values = [r[m] for r in runs if r.get(m) is not None]
        out["median"][m] = statistics.median(values) if values else None
        out["min"][m] = min(values) if values else None
        out["max"][m] = max(values) if values else None
    return out


def find_point(points: list[dict[str, Any]], target: str, mode: str, c: int) -> dict[str, Any] | None:
    return next((p for p in points if p["target"] == target and p["mode"] == mode and p["concurrency"] == c), None)


def point_median(points: list[dict[str, Any]], target: str, mode: str, c: int, metric: str) -> float | None:
    p = find_point(points, target, mode, c)
    value: float | None = None if p is None else p["median"].get(metric)
    return value


def _row(name: str, goal: str, measured: float | None, bare: float | None, ok: bool | None,
         unit: str, note: str = "") -> dict[str, Any]:
    return {"target": name, "goal": goal, "measured": measured, "bare_proxy": bare, "unit": unit,
            "result": "n/a" if ok is None else ("PASS" if ok else "MISS"), "note": note}


def _per_c(points: list[dict[str, Any]], gateway: str, bare: str, mode: str, metric: str) -> str:
    """`c=1 2.10/1.20, c=16 ...`: the gateway's and the bare proxy's medians at every concurrency."""
    parts = []
    for c in sorted({p["concurrency"] for p in points if p["mode"] == mode}):
        g, b = point_median(points, gateway, mode, c, metric), point_median(points, bare, mode, c, metric)
        parts.append(f"c={c} " + "/".join("–" if v is None else f"{v:.2f}" for v in (g, b)))
    return "specgate/bare ms: " + ", ".join(parts)


def _worst(points: list[dict[str, Any]], target: str, mode: str, metric: str) -> tuple[float | None, int | None]:
    best: tuple[float | None, int | None] = (None, None)
    for p in points:
        v = p["median"].get(metric) if p["target"] == target and p["mode"] == mode else None
        if v is not None and (best[0] is None or v > best[0]):
            best = (v, p["concurrency"])
    return best


CPU_RATIO_GOAL = 1.5  # specgate's CPU per request (or stream) over the bare proxy's, measured back to back
THROUGHPUT_GOAL = 0.8  # specgate's req/s at c = 64 over the bare proxy's
ADDED_LATENCY_GOAL_MS = 0.3  # specgate's added p50 (and TTFT) at c = 1 over the bare proxy's
FLEET_CPU_GOAL_MS = 0.05  # CPU per request with a fleet of backends over the two-backend case


def evaluate(points: list[dict[str, Any]], rss: dict[str, Any], workers: dict[str, Any] | None,
             gateway: str = "specgate", bare: str = "bare-proxy") -> list[dict[str, Any]]:
    """The overhead targets, each PASS/MISS with the measured number and the bare proxy's."""
    rows = [_cpu_ratio_row(points, gateway, bare, mode) for mode in ("plain", "stream")]
    rows += [_throughput_row(points, gateway, bare, mode) for mode in ("plain", "stream")]
    rows += [_latency_row(points, gateway, bare, *spec) for spec in (
        ("added p50 latency c=1", "plain", "added_p50_ms"), ("added p50 TTFT c=1 (stream)", "stream",
                                                              "added_ttft_p50_ms"))]
    rows += _fleet_rows(points, gateway)
    rows += _rss_rows(rss, gateway, bare)
    if workers:
        ratio = workers.get("scaling")
        rows.append(_row(f"throughput scaling 1 -> {workers['n']} workers", ">= 1.2x (scales with cores)", ratio,
                         None, None if ratio is None else ratio >= 1.2, "x", workers.get("note", "")))
        rows.append(_row("metrics correct across workers", "requests_total == requests sent",
                         workers.get("metrics_counted"), workers.get("metrics_expected"),
                         workers.get("metrics_ok"), "requests"))
    return rows


def _cpu_ratio_row(points: list[dict[str, Any]], gateway: str, bare: str, mode: str) -> dict[str, Any]:
    """The worst ratio over the concurrencies measured."""
    name = "CPU per non-streamed request vs bare" if mode == "plain" else "CPU per stream vs bare"
    goal = f"<= {CPU_RATIO_GOAL}x bare"
    ratios = []
    for p in points:
        if p["target"] == gateway and p["mode"] == mode:
            b = point_median(points, bare, mode, p["concurrency"], "cpu_ms_per_req")
            g = p["median"].get("cpu_ms_per_req")
            if b and g is not None:
                ratios.append((g / b, p["concurrency"], g, b))
    if not ratios:
        return _row(name, goal, None, None, None, "x")
    ratio, c_at, g, b = max(ratios)
    return _row(name, goal, ratio, 1.0, ratio <= CPU_RATIO_GOAL, "x",
                f"worst point c={c_at}: {g:.2f} ms vs bare {b:.2f} ms; "
                + _per_c(points, gateway, bare, mode, "cpu_ms_per_req"))


def _throughput_row(points: list[dict[str, Any]], gateway: str, bare: str, mode: str) -> dict[str, Any]:
    g = point_median(points, gateway, mode, 64, "rps")
    b = point_median(points, bare, mode, 64, "rps")
    ratio = None if g is None or not b else g / b
    note = "" if ratio is None else f"{g:.0f} vs bare {b:.0f} req/s"
    gc = point_median(points, gateway, mode, 64, "cpu_ms_per_req")
    bc = point_median(points, bare, mode, 64, "cpu_ms_per_req")
    if gc and bc:
        note += (f"; CPU-bound capacity of one core (1000 / CPU ms per request): {1000 / gc:.0f} vs bare "
                 f"{1000 / bc:.0f} req/s = {bc / gc:.2f}x")
    return _row(f"throughput c=64 {mode} vs bare", f">= {THROUGHPUT_GOAL}x bare", ratio, 1.0,
                None if ratio is None else ratio >= THROUGHPUT_GOAL, "x", note)


def _latency_row(points: list[dict[str, Any]], gateway: str, bare: str, name: str, mode: str,
                 metric: str) -> dict[str, Any]:
    """Added latency over the bare proxy's (both over the backend directly), at c = 1."""
    g = point_median(points, gateway, mode, 1, metric)
    b = point_median(points, bare, mode, 1, metric)
    over = None if g is None or b is None else g - b
    note = "" if over is None else f"specgate adds {g:.2f} ms over the backend, the bare proxy {b:.2f} ms"
    return _row(name + " over bare", f"<= +{ADDED_LATENCY_GOAL_MS} ms", over, 0.0,
                None if over is None else over <= ADDED_LATENCY_GOAL_MS, "ms", note)


def _fleet_rows(points: list[dict[str, Any]], gateway: str) -> list[dict[str, Any]]:
    """Each `specgate-fleetN` target (bench-overhead --fleet N) against the two-backend gateway: at each point, the
    median over repeats of the difference in CPU per request within a repeat (the two run back to back there, so
    the host's drift between repeats cancels); the worst point decides."""
    rows = []
    for fleet in sorted({p["target"] for p in points if p["target"].startswith(gateway + "-fleet")}):
        diffs = []
        for p in points:
            if p["target"] != fleet:
                continue
            two = find_point(points, gateway, p["mode"], p["concurrency"])
            if two is None:
                continue
            paired = [a["cpu_ms_per_req"] - b["cpu_ms_per_req"] for a, b in zip(p["runs"], two["runs"], strict=False)
                      if a.get("cpu_ms_per_req") is not None and b.get("cpu_ms_per_req") is not None]
            if paired:
                diffs.append((statistics.median(paired), p["mode"], p["concurrency"], min(paired), max(paired)))
        if not diffs:
            continue
        diff, mode, c, low, high = max(diffs)
        rows.append(_row(f"CPU per request, {fleet.removeprefix(gateway + '-')} vs 2 backends",
                         f"<= +{FLEET_CPU_GOAL_MS} ms", diff, 0.0, diff <= FLEET_CPU_GOAL_MS, "ms",
                         f"paired by repeat, median (min to max); worst point {mode} c={c}: {diff:+.3f} ({low:+.2f} "
                         f"to {high:+.2f}) ms; all: "
                         + ", ".join(f"{m} c={cc} {d:+.3f}" for d, m, cc, _, _ in sorted(diffs, key=lambda x: x[1:3]))))
    return rows


def _rss_rows(rss: dict[str, Any], gateway: str, bare: str) -> list[dict[str, Any]]:
    held = rss.get("open_streams", {}).get(gateway)
    held_bare = rss.get("open_streams", {}).get(bare)
    ok = None if not held else held["peak_mb"] <= 150 and held["max_open"] >= held["streams"] * 0.95
    long_run = rss.get("long_run", {}).get(gateway)
    return [
        _row("RSS with open streams", "<= 150 MB", held and held["peak_mb"], held_bare and held_bare["peak_mb"], ok,
             "MB", f"{held['max_open']} of {held['streams']} open at once" if held else ""),
        _row("RSS flat over a long run", "growth <= 10 MB and <= 10% in the second half",
             long_run and long_run["growth_second_half_mb"], None, None if not long_run else long_run["flat"], "MB",
             f"{long_run['requests']} requests, {long_run['start_mb']:.0f} -> {long_run['end_mb']:.0f} MB"
             if long_run else ""),
    ]


def flat(samples: list[tuple[float, float]]) -> tuple[bool, float]:
    """RSS flat: growth over the second half of the run (after warm-up) <= 10 MB and <= 10%."""
    if len(samples) < 4:
        return True, 0.0
    half = samples[len(samples) // 2:]
    mid = statistics.median(v for _, v in half[: max(1, len(half) // 5)])
    end = statistics.median(v for _, v in half[-max(1, len(half) // 5):])
    growth = end - mid
    return growth <= 10 and growth <= 0.1 * mid, growth
