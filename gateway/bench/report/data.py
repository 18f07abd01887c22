"""Turn a source (bench results files, a gateway's `/metrics` text, Prometheus series) into report rows.

Row per task class: acceptance (tokens per engine step on the speculative server), speculative's speedup
over baseline, latency percentiles per backend, the routing split; plus the load above which speculation
stopped paying and the GPU memory the second server costs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gateway.bench.kit.stats import percentile
from gateway.bench.replay.summary import ok
from gateway.bench.replay.verdict import class_rows, gateway_policy

LOAD_BINS = (0, 2, 4, 8, 16, 32, 64, 128)


@dataclass(slots=True)
class ClassRow:
    task_class: str
    requests: int = 0
    tokens_per_step: float | None = None
    speedup: float | None = None
    latency: dict[str, dict[str, float | None]] = field(default_factory=dict)  # role -> {p50, p90, p99}
    routed: dict[str, float] = field(default_factory=dict)  # role -> requests


@dataclass(slots=True)
class LoadCurve:
    unit: str
    points: list[tuple[float, float]]  # (load, speedup of speculative over baseline)
    threshold: float | None
    note: str


@dataclass(slots=True)
class ReportData:
    source: str
    speedup_basis: str
    classes: list[ClassRow]
    load: LoadCurve | None
    memory: dict[str, Any]
    overall_speedup: float | None = None
    gateway_gain: float | None = None
    gateway_policy: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def threshold(points: Sequence[tuple[float, float]]) -> float | None:
    """The load above which speculation stops paying: where the speedup last crosses 1 going up in load and
    stays below 1 at every higher measured load (linear between the bracketing points). None when it still
    pays at the highest load, or when it pays at no measured load (see `pays_at`)."""
    pts = sorted(points)
    if not pts or pts[-1][1] >= 1.0 or all(y < 1.0 for _, y in pts):
        return None
    i = max(k for k, (_, y) in enumerate(pts) if y >= 1.0)
    (x0, y0), (x1, y1) = pts[i], pts[i + 1]
    return round(x0 + (x1 - x0) * (y0 - 1.0) / (y0 - y1), 2)


def pays_at(points: Sequence[tuple[float, float]]) -> str:
    """"all", "none" or "some" of the measured loads."""
    if not points:
        return "none measured"
    paying = [y >= 1.0 for _, y in points]
    return "all" if all(paying) else "none" if not any(paying) else "some"


def _latency(records: Iterable[dict[str, Any]]) -> dict[str, float | None]:
    e2e = [r["e2e_s"] for r in records if ok(r)]
    return {"p50": percentile(e2e, 50), "p90": percentile(e2e, 90), "p99": percentile(e2e, 99)}


def paired_load_curve(doc: dict[str, Any]) -> LoadCurve | None:
    """Per-request speedup (same request id on the baseline and speculative runs), binned by the requests in
    flight when it was sent in the baseline run."""
    policies = doc["policies"]
    if "baseline" not in policies or "speculative" not in policies:
        return None
    spec = {r["id"]: r for r in policies["speculative"]["requests"] if ok(r)}
    bins: dict[int, list[float]] = {}
    for r in policies["baseline"]["requests"]:
        other = spec.get(r["id"])
        if not ok(r) or other is None or r.get("inflight_at_send") is None:
            continue
        level = max(b for b in LOAD_BINS if b <= r["inflight_at_send"])
        bins.setdefault(level, []).append(math.log(r["e2e_s"] / other["e2e_s"]))
    points = [(float(level), round(math.exp(sum(v) / len(v)), 3)) for level, v in sorted(bins.items()) if len(v) >= 5]
    return LoadCurve("requests in flight at send", points, threshold(points),
                     "geometric mean of per-request speedups, same requests on both servers")


def _load_of(doc: dict[str, Any]) -> float:
    base = doc["policies"].get("baseline", {}).get("requests", [])
    levels = [r["inflight_at_send"] for r in base if r.get("inflight_at_send") is not None]
    return round(sum(levels) / len(levels), 2) if levels else 0.0


def from_results(docs: Sequence[dict[str, Any]], memory: dict[str, Any]) -> ReportData:
    """The report from one or more bench results files (several files = several load levels)."""
    main = max(docs, key=lambda d: len(d["policies"]))
    rows = []
    for row in class_rows(main):
        task_class = row["class"]
        latency = {}
        for role in ("baseline", "speculative"):
            recs = [r for r in main["policies"].get(role, {}).get("requests", []) if r.get("class") == task_class]
            if recs:
                latency[role] = _latency(recs)
        gw = gateway_policy(main["policies"])
        routed = main["policies"][gw]["by_class"].get(task_class, {}).get("routed", {}) if gw else {}
        rows.append(ClassRow(task_class, row["requests"], row["tokens_per_step"], row["speedup"], latency,
                             dict(routed)))
    if len(docs) > 1:
        points = []
        for doc in docs:
            s = doc["policies"]
            if "baseline" in s and "speculative" in s and s["speculative"]["summary"]["mean_e2e_s"]:
                points.append((_load_of(doc), round(s["baseline"]["summary"]["mean_e2e_s"]
                                                    / s["speculative"]["summary"]["mean_e2e_s"], 3)))
        load: LoadCurve | None = LoadCurve("mean requests in flight (baseline run)", sorted(points),
                                           threshold(points), f"{len(points)} bench runs at different loads")
    else:
        load = paired_load_curve(main)
    from gateway.bench.plan.quick import layout_sentence
    from gateway.bench.replay.verdict import overall

    o = overall(main)
    return ReportData(
        source=", ".join(f"{d['workload']}@{d['profile']}" for d in docs),
        speedup_basis=f"mean end-to-end latency, same requests on each server (bench); class rows from "
                      f"{main['workload']}",
        classes=rows, load=load, memory=memory, overall_speedup=o.get("speculative_speedup"),
        gateway_gain=o.get("gateway_vs_best_static"), gateway_policy=o.get("gateway_policy"),
        extra={"profile": main["profile"], "plan": layout_sentence(main["workload"], main["profile"])},
    )
