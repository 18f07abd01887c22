"""Report rows from the gateway's own metrics: a live `/metrics` scrape or a Prometheus server.

Speedup here is per output token (`specgate_time_per_output_token_seconds`, baseline over speculative, per
class): the two backends see different requests, and per-token time is the fair comparison. Acceptance is
the learner's tokens per step per class. With Prometheus, the load curve comes from the history of that
ratio against the requests in flight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gateway.bench.kit.metrics import Sample
from gateway.bench.kit.metrics import sample_sum as _sum
from gateway.bench.report.data import LOAD_BINS, ClassRow, LoadCurve, ReportData, threshold

ROLES = ("baseline", "speculative")


def histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float | None:
    """PromQL's histogram_quantile over (upper bound, cumulative count) pairs."""
    buckets = sorted(buckets)
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    prev_le, prev_count = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if math.isinf(le):
                return prev_le
            if count == prev_count:
                return le
            return prev_le + (le - prev_le) * (rank - prev_count) / (count - prev_count)
        prev_le, prev_count = le, count
    return prev_le


def _quantiles(samples: Sequence[Sample], role: str, task_class: str) -> dict[str, float | None]:
    per_le: dict[float, float] = {}
    for name, labels, value in samples:
        if name == "specgate_request_duration_seconds_bucket" and labels.get("role") == role \
                and labels.get("class") == task_class:
            le = float(labels["le"])
            per_le[le] = per_le.get(le, 0.0) + value
    pairs = sorted(per_le.items())
    return {f"p{int(q * 100)}": histogram_quantile(q, pairs) for q in (0.5, 0.9, 0.99)}


def _mean(samples: Sequence[Sample], base: str, role: str, task_class: str) -> float | None:
    count = _sum(samples, f"{base}_count", role=role, **{"class": task_class})
    return _sum(samples, f"{base}_sum", role=role, **{"class": task_class}) / count if count else None


def _learned_tps(samples: Sequence[Sample], task_class: str) -> float | None:
    values = [v for n, labels, v in samples
              if n == "specgate_learned_tokens_per_step" and labels.get("class") == task_class]
    return round(sum(values) / len(values), 3) if values else None


def from_samples(samples: Sequence[Sample], source: str, memory: dict[str, Any],
                 load: LoadCurve | None = None) -> ReportData:
    classes = sorted({labels["class"] for n, labels, _ in samples
                      if n == "specgate_requests_total" and "class" in labels})
    rows = []
    for task_class in classes:
        routed = {role: _sum(samples, "specgate_requests_total", role=role, **{"class": task_class}) for role in ROLES}
        tpot = {role: _mean(samples, "specgate_time_per_output_token_seconds", role, task_class) for role in ROLES}
        e2e = {role: _mean(samples, "specgate_request_duration_seconds", role, task_class) for role in ROLES}
        ratio = None
        if tpot["baseline"] and tpot["speculative"]:
            ratio = round(tpot["baseline"] / tpot["speculative"], 3)
        elif e2e["baseline"] and e2e["speculative"]:
            ratio = round(e2e["baseline"] / e2e["speculative"], 3)
        latency = {role: _quantiles(samples, role, task_class) for role in ROLES if routed[role]}
        rows.append(ClassRow(task_class, int(sum(routed.values())), _learned_tps(samples, task_class), ratio, latency,
                             routed))
    inflight = {labels.get("backend", "?"): v for n, labels, v in samples if n == "specgate_inflight_requests"}
    if load is None:
        load = LoadCurve("requests in flight", [], None,
                         "a single scrape has no history: point the report at Prometheus, or at bench results "
                         f"from several loads (in flight now: {inflight or 'n/a'})")
    total = {role: _sum(samples, "specgate_time_per_output_token_seconds_sum", role=role) for role in ROLES}
    count = {role: _sum(samples, "specgate_time_per_output_token_seconds_count", role=role) for role in ROLES}
    overall = None
    if all(count.values()) and total["speculative"]:
        overall = round((total["baseline"] / count["baseline"]) / (total["speculative"] / count["speculative"]), 3)
    return ReportData(source=source, speedup_basis="time per output token, baseline over speculative (gateway "
                      "metrics; each backend's own requests)", classes=rows, load=load, memory=memory,
                      overall_speedup=overall, extra={"inflight_now": inflight})


# --- Prometheus ---------------------------------------------------------------------------------------------

_INSTANT = {
    "specgate_requests_total": "sum by (role, class) (specgate_requests_total)",
    "specgate_learned_tokens_per_step": "avg by (class, temperature) (specgate_learned_tokens_per_step)",
    "specgate_inflight_requests": "sum by (backend, role) (specgate_inflight_requests)",
    "specgate_request_duration_seconds_bucket":
        "sum by (role, class, le) (specgate_request_duration_seconds_bucket)",
}
for _suffix in ("sum", "count"):
    for _base in ("specgate_time_per_output_token_seconds", "specgate_request_duration_seconds"):
        _INSTANT[f"{_base}_{_suffix}"] = f"sum by (role, class) ({_base}_{_suffix})"
_TPOT = ("sum by (role) (rate(specgate_time_per_output_token_seconds_sum[{w}])) / "
         "sum by (role) (rate(specgate_time_per_output_token_seconds_count[{w}]))")
_LOAD = "sum(specgate_inflight_requests)"


async def _query(session: Any, base: str, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
    async with session.get(f"{base}/api/v1/{path}", params=params) as resp:
        body = await resp.json()
    if body.get("status") != "success":
        raise RuntimeError(f"Prometheus query failed: {body.get('error', body)}")
    return list(body["data"]["result"])


async def prometheus_report(base: str, memory: dict[str, Any], window_s: float = 3600.0,
                            step_s: float = 15.0, rate_window: str = "1m") -> ReportData:
    import time

    import aiohttp

    base = base.rstrip("/")
    samples: list[Sample] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        for name, promql in _INSTANT.items():
            for series in await _query(session, base, "query", {"query": promql}):
                samples.append((name, dict(series["metric"]), float(series["value"][1])))
        end = time.time()
        rng = {"start": str(end - window_s), "end": str(end), "step": str(step_s)}
        tpot = await _query(session, base, "query_range", {"query": _TPOT.format(w=rate_window), **rng})
        load = await _query(session, base, "query_range", {"query": _LOAD, **rng})
    return from_samples(samples, f"prometheus {base}", memory, _history_curve(tpot, load))


def _history_curve(tpot: list[dict[str, Any]], load: list[dict[str, Any]]) -> LoadCurve:
    by_role = {s["metric"].get("role"): {float(t): float(v) for t, v in s["values"]} for s in tpot}
    levels = {float(t): float(v) for s in load for t, v in s["values"]}
    bins: dict[int, list[float]] = {}
    for t, base_tpot in by_role.get("baseline", {}).items():
        spec_tpot = by_role.get("speculative", {}).get(t)
        if spec_tpot and base_tpot and t in levels and math.isfinite(base_tpot / spec_tpot):
            level = max(b for b in LOAD_BINS if b <= levels[t])
            bins.setdefault(level, []).append(math.log(base_tpot / spec_tpot))
    points = [(float(k), round(math.exp(sum(v) / len(v)), 3)) for k, v in sorted(bins.items())]
    return LoadCurve("requests in flight (gateway)", points, threshold(points),
                     "time-per-token ratio over time, binned by the gateway's requests in flight")
