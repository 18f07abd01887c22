"""Pure arithmetic of `specgate bench-overhead`: per-run summaries, medians over repeats, the issue's targets."""

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


def point_median(points: list[dict[str, Any]], target: str, mode: str, c: int, metric: str) -> float | None:
    for p in points:
        if p["target"] == target and p["mode"] == mode and p["concurrency"] == c:
            value: float | None = p["median"].get(metric)
            return value
    return None


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


def evaluate(points: list[dict[str, Any]], rss: dict[str, Any], workers: dict[str, Any] | None,
             gateway: str = "specgate", bare: str = "bare-proxy") -> list[dict[str, Any]]:
    """The targets of issue 8, each PASS/MISS with the measured number and the bare proxy's."""
    rows = []
    cpu, c_at = _worst(points, gateway, "plain", "cpu_ms_per_req")
    cpu_bare, _ = _worst(points, bare, "plain", "cpu_ms_per_req")
    rel = ""
    if cpu is not None and c_at is not None:
        b_at = point_median(points, bare, "plain", c_at, "cpu_ms_per_req")
        if b_at:
            rel = (f"; {cpu / b_at:.2f}x the bare proxy at that point (the goal is 1.67x the bare proxy's 0.3 ms "
                   f"measured when the issue was written)")
    rows.append(_row("non-streaming CPU per request", "<= 0.5 ms", cpu, cpu_bare,
                     None if cpu is None else cpu <= 0.5, "ms",
                     f"worst point (c={c_at}){rel}; " + _per_c(points, gateway, bare, "plain", "cpu_ms_per_req")))
    ratios = []
    for p in points:
        if p["target"] == gateway and p["mode"] == "stream":
            b = point_median(points, bare, "stream", p["concurrency"], "cpu_ms_per_req")
            g = p["median"].get("cpu_ms_per_req")
            if b and g is not None:
                ratios.append((g / b, p["concurrency"], g, b))
    if ratios:
        ratio, c_at, g, b = max(ratios)
        rows.append(_row("streaming CPU per stream vs bare", "<= 2.0x bare", ratio, 1.0, ratio <= 2.0, "x",
                         f"worst point c={c_at}: {g:.2f} ms vs bare {b:.2f} ms per stream; "
                         + _per_c(points, gateway, bare, "stream", "cpu_ms_per_req")))
    else:
        rows.append(_row("streaming CPU per stream vs bare", "<= 2.0x bare", None, None, None, "x"))
    for mode in ("plain", "stream"):
        g = point_median(points, gateway, mode, 64, "rps")
        b = point_median(points, bare, mode, 64, "rps")
        ratio = None if g is None or not b else g / b
        ok = None if ratio is None else ratio >= 0.8
        note = "" if ratio is None else f"{g:.0f} vs bare {b:.0f} req/s"
        gc = point_median(points, gateway, mode, 64, "cpu_ms_per_req")
        bc = point_median(points, bare, mode, 64, "cpu_ms_per_req")
        if gc and bc:
            note += (f"; CPU-bound capacity of one core (1000 / CPU ms per request): {1000 / gc:.0f} vs bare "
                     f"{1000 / bc:.0f} req/s = {bc / gc:.2f}x")
        rows.append(_row(f"throughput c=64 {mode} vs bare", ">= 0.8x bare", ratio, 1.0, ok, "x", note))
    for name, mode, metric, goal in (("added p50 latency c=1", "plain", "added_p50_ms", 0.6),
                                     ("added p50 TTFT c=1 (stream)", "stream", "added_ttft_p50_ms", 1.0)):
        g = point_median(points, gateway, mode, 1, metric)
        b = point_median(points, bare, mode, 1, metric)
        note = "" if g is None or b is None else f"{g - b:+.2f} ms over the bare proxy's added latency"
        rows.append(_row(name, f"<= {goal} ms", g, b, None if g is None else g <= goal, "ms", note))
    held = rss.get("open_streams", {}).get(gateway)
    held_bare = rss.get("open_streams", {}).get(bare)
    ok = None if not held else held["peak_mb"] <= 150 and held["max_open"] >= held["streams"] * 0.95
    rows.append(_row("RSS with open streams", "<= 150 MB", held and held["peak_mb"],
                     held_bare and held_bare["peak_mb"], ok, "MB",
                     f"{held['max_open']} of {held['streams']} open at once" if held else ""))
    long_run = rss.get("long_run", {}).get(gateway)
    rows.append(_row("RSS flat over a long run", "growth <= 10 MB and <= 10% in the second half",
                     long_run and long_run["growth_second_half_mb"], None,
                     None if not long_run else long_run["flat"], "MB",
                     f"{long_run['requests']} requests, {long_run['start_mb']:.0f} -> {long_run['end_mb']:.0f} MB"
                     if long_run else ""))
    if workers:
        ratio = workers.get("scaling")
        rows.append(_row(f"throughput scaling 1 -> {workers['n']} workers", ">= 1.2x (scales with cores)", ratio,
                         None, None if ratio is None else ratio >= 1.2, "x", workers.get("note", "")))
        rows.append(_row("metrics correct across workers", "requests_total == requests sent",
                         workers.get("metrics_counted"), workers.get("metrics_expected"),
                         workers.get("metrics_ok"), "requests"))
    return rows


def flat(samples: list[tuple[float, float]]) -> tuple[bool, float]:
    """RSS flat: growth over the second half of the run (after warm-up) <= 10 MB and <= 10%."""
    if len(samples) < 4:
        return True, 0.0
    half = samples[len(samples) // 2:]
    mid = statistics.median(v for _, v in half[: max(1, len(half) // 5)])
    end = statistics.median(v for _, v in half[-max(1, len(half) // 5):])
    growth = end - mid
    return growth <= 10 and growth <= 0.1 * mid, growth
