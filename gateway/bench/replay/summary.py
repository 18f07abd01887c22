"""Pure statistics over measured requests (dicts in the results-file shape, simulated seconds)."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from gateway.bench.kit.stats import percentile

Record = dict[str, Any]


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _round(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(value, digits)


def ok(record: Record) -> bool:
    return record.get("status") == "200" and record.get("e2e_s") is not None


def tokens_per_step(records: Iterable[Record]) -> float | None:
    """Completion tokens over engine steps (1.0 on the baseline; mean acceptance length on speculative)."""
    tokens = steps = 0
    for r in records:
        if ok(r) and r.get("completion_tokens") and r.get("engine_steps"):
            tokens += r["completion_tokens"]
            steps += r["engine_steps"]
    return round(tokens / steps, 3) if steps else None


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    good = [r for r in records if ok(r)]
    e2e = [r["e2e_s"] for r in good]
    ttft = [r["ttft_s"] for r in good if r.get("ttft_s") is not None]
    tokens = sum(r.get("completion_tokens") or 0 for r in good)
    starts = [r["sent_s"] for r in records if r.get("sent_s") is not None]
    ends = [r["sent_s"] + r["e2e_s"] for r in good if r.get("sent_s") is not None]
    span = (max(ends) - min(starts)) if ends and starts else 0.0
    routed = {"baseline": 0, "speculative": 0}
    for r in records:
        if r.get("backend") in routed:
            routed[r["backend"]] += 1
    spec = [r for r in good if r.get("backend") == "speculative"]
    return {
        "requests": len(records),
        "errors": len(records) - len(good),
        "mean_e2e_s": _round(_mean(e2e)),
        "p50_e2e_s": _round(percentile(e2e, 50)),
        "p90_e2e_s": _round(percentile(e2e, 90)),
        "p99_e2e_s": _round(percentile(e2e, 99)),
        "mean_ttft_s": _round(_mean(ttft)),
        "p90_ttft_s": _round(percentile(ttft, 90)),
        "output_tokens_per_s": _round(tokens / span if span > 0 else None, 2),
        "routed": routed,
        "completion_tokens": tokens,
        "speculative_tokens_per_step": tokens_per_step(spec),
    }


def group_summaries(records: Sequence[Record], key: Callable[[Record], str | None]) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[Record]] = {}
    for r in records:
        groups.setdefault(key(r) or "unknown", []).append(r)
    return {name: summarize(groups[name]) for name in sorted(groups)}


def prediction_errors(log_lines: Iterable[dict[str, Any]], time_scale: float) -> dict[str, Any]:
    """Median and p90 of |predicted - observed| / observed from the gateway's per-request log lines."""
    errors: list[float] = []
    by_reason: dict[str, int] = {}
    for line in log_lines:
        if line.get("event") != "request":
            continue
        reason = str(line.get("reason") or "").split(" ")[0]
        by_reason[reason] = by_reason.get(reason, 0) + 1
        predicted, observed = line.get("predicted_s"), line.get("observed_s")
        if predicted is not None and observed and line.get("status") == "200":
            errors.append(abs(predicted - observed) / observed)
    return {
        "predictions": len(errors),
        "median_error_ratio": _round(percentile(errors, 50)),
        "p90_error_ratio": _round(percentile(errors, 90)),
        "reasons": dict(sorted(by_reason.items())),
        "note": f"gateway wall-clock predictions vs observations (time_scale {time_scale})",
    }


def speedup(baseline: dict[str, Any] | None, other: dict[str, Any] | None, key: str = "mean_e2e_s") -> float | None:
    """How many times faster `other` is than `baseline` on `key` (>1 means faster)."""
    if not baseline or not other or not baseline.get(key) or not other.get(key):
        return None
    return round(float(baseline[key]) / float(other[key]), 3)
