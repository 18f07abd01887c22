"""What the servers say, read with the stdlib: status and body, readiness, vLLM's speculative-decoding counters,
a gateway histogram, the learner's state."""

from __future__ import annotations

import time
import urllib.request
from typing import Any

from gateway.bench.kit.metrics import parse_text
from gateway.bench.report.metrics import histogram_quantile
from gateway.core.vllm_metrics import parse_vllm_metrics


def http_get(url: str, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except Exception as exc:
        status = getattr(exc, "code", 0)
        return int(status or 0), str(exc)


def wait_ok(url: str, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if http_get(url, 2.0)[0] == 200:
            return True
        time.sleep(0.5)
    return False


def spec_counters(metrics_text: str) -> dict[str, float]:
    try:
        snap = parse_vllm_metrics(metrics_text)
    except ValueError:  # not an exposition (the server did not answer): count nothing
        snap = parse_vllm_metrics("")
    return {"drafts": snap.drafts, "draft_tokens": snap.draft_tokens, "accepted": snap.accepted_tokens,
            "generation_tokens": snap.generation_tokens}


def counters_by(text: str, name: str, label: str) -> dict[str, float]:
    """A Prometheus counter summed per value of one label (e.g. the gateway's live migrations by reason)."""
    out: dict[str, float] = {}
    for n, labels, v in parse_text(text):
        if n == name:
            key = labels.get(label, "")
            out[key] = out.get(key, 0.0) + v
    return out


def histogram(text: str, name: str) -> dict[str, Any]:
    """Sum over label sets of a Prometheus histogram: count, mean, and PromQL-style p50/p90/p99."""
    buckets: dict[float, float] = {}
    total = count = 0.0
    for n, labels, v in parse_text(text):
        if n == name + "_bucket":
            le = float(labels["le"])
            buckets[le] = buckets.get(le, 0.0) + v
        elif n == name + "_sum":
            total += v
        elif n == name + "_count":
            count += v
    out: dict[str, Any] = {"count": count, "mean_s": total / count if count else None}
    for q in (0.5, 0.9, 0.99):
        out[f"p{int(q * 100)}_s"] = histogram_quantile(q, sorted(buckets.items()))
    return out


def extract_learned(state: dict[str, Any]) -> tuple[float | None, Any]:
    learner = state.get("learner") or {}
    tps = learner.get("backend_tokens_per_step")
    classes = learner.get("classes")
    if isinstance(classes, dict | list):
        slim: Any = classes
        if isinstance(classes, dict):
            slim = {k: {kk: vv for kk, vv in v.items() if "token" in kk or "accept" in kk or "weight" in kk
                        or kk in ("n", "count", "observations")} if isinstance(v, dict) else v
                    for k, v in classes.items()}
        classes = slim
    return (float(tps) if isinstance(tps, int | float) else None), classes
