"""What a real-GPU run reports: progress lines, a summary per phase, the markdown table."""

from __future__ import annotations

import dataclasses
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench_gateway import split_policy

from gateway.bench.kit.stats import percentile
from gateway.bench.replay.client import Measured

T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", flush=True)


def summarize(rows: list[Measured], wall_s: float) -> dict[str, Any]:
    ok = [r for r in rows if r.status == "200" and r.e2e_s is not None]
    e2e = [r.e2e_s for r in ok if r.e2e_s is not None]
    ttft = [r.ttft_s for r in ok if r.ttft_s is not None]
    tokens = sum(r.completion_tokens or 0 for r in ok)
    split: dict[str, int] = {}
    by_class: dict[str, dict[str, int]] = {}
    reasons: dict[str, int] = {}
    tps: dict[str, list[float]] = {}
    for r in ok:
        b = r.backend or "direct"
        split[b] = split.get(b, 0) + 1
        by_class.setdefault(r.cls or "?", {}).setdefault(b, 0)
        by_class[r.cls or "?"][b] += 1
        token = (r.reason or "").split(" ")[0] or "-"
        reasons[token] = reasons.get(token, 0) + 1
        if r.completion_tokens and r.engine_steps:
            tps.setdefault(b, []).append(r.completion_tokens / r.engine_steps)
    errors: dict[str, int] = {}
    for r in rows:
        if r.status != "200":
            errors[r.status] = errors.get(r.status, 0) + 1
    return {
        "n": len(rows), "ok": len(ok), "errors": errors,
        "error_sample": [r.error for r in rows if r.status != "200"][:3],
        "wall_s": wall_s, "tokens": tokens, "tok_per_s": tokens / wall_s if wall_s else None,
        "mean_e2e_s": statistics.mean(e2e) if e2e else None, "p50_e2e_s": percentile(e2e, 50, "nearest_rank"),
        "p90_e2e_s": percentile(e2e, 90, "nearest_rank"),
        "mean_ttft_s": statistics.mean(ttft) if ttft else None, "p90_ttft_s": percentile(ttft, 90, "nearest_rank"),
        "mean_tpot_ms": statistics.mean([1000 * (r.e2e_s - r.ttft_s) / max((r.completion_tokens or 2) - 1, 1)
                                         for r in ok if r.ttft_s is not None and r.e2e_s is not None]) if ok else None,
        "split": split, "split_by_class": by_class, "reasons": reasons,
        "tokens_per_step": {b: statistics.mean(v) for b, v in tps.items()},
    }


def row_json(r: Measured, policy: str, phase: str) -> str:
    d = dataclasses.asdict(r)
    d.update(policy=policy, phase=phase)
    return json.dumps(d)


def fmt(v: Any, scale: float = 1.0, nd: int = 3) -> str:
    return "-" if v is None else f"{v * scale:.{nd}f}"


def render(results: dict[str, Any]) -> str:
    lines = [f"# specgate on {results['meta'].get('label')} ({results['meta'].get('target')})", "",
             "| phase | target | n ok/err | mean e2e s | p90 e2e s | mean TTFT s | p90 TTFT s | TPOT ms | tok/s |"
             " split base/spec | tok/step spec | learned tok/step | overhead mean/p99 ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in results["runs"]:
        s = run["summary"]
        learned = run.get("learned_tokens_per_step")
        ov = run.get("overhead") or {}
        err = sum(s["errors"].values())
        split = f"{s['split'].get('baseline', 0)}/{s['split'].get('speculative', 0)}" if run["policy"] != "direct" \
            else "-"
        tps = s["tokens_per_step"].get("speculative", s["tokens_per_step"].get("direct"))
        lines.append(
            f"| {run['phase']} | {run['policy']}{'→' + run['direct_target'] if run.get('direct_target') else ''} | "
            f"{s['ok']}/{err} | {fmt(s['mean_e2e_s'])} | {fmt(s['p90_e2e_s'])} | {fmt(s['mean_ttft_s'])} | "
            f"{fmt(s['p90_ttft_s'])} | {fmt(s['mean_tpot_ms'], nd=2)} | {fmt(s['tok_per_s'], nd=0)} | {split} | "
            f"{fmt(tps, nd=2)} | {fmt(learned, nd=2)} | "
            f"{fmt(ov.get('mean_s'), 1000, 2)}/{fmt(ov.get('p99_s'), 1000, 2)} |")
    lines.append("")
    for run in results["runs"]:
        if split_policy(run["policy"])[0] in ("rules", "adaptive") and run["phase"] == "high":
            lines.append(f"- {run['policy']} split by class (cumulative low+high phases shown per phase): "
                         + json.dumps(run["summary"]["split_by_class"]))
            if run.get("learned_classes") is not None:
                lines.append(f"  learned per class: {json.dumps(run['learned_classes'])}")
    return "\n".join(lines) + "\n"


class Record:
    """What goes to --out as the run goes: results.json and summary.md rewritten after each phase, requests.jsonl
    a row per request."""

    def __init__(self, out: Path, meta: dict[str, Any]) -> None:
        self.out = out
        self.results: dict[str, Any] = {"meta": meta, "runs": []}
        self._requests = open(out / "requests.jsonl", "w")  # noqa: SIM115 - closed in close()

    def rows(self, rows: list[Measured], policy: str, phase: str) -> None:
        for r in rows:
            self._requests.write(row_json(r, policy, phase) + "\n")

    def add(self, run: dict[str, Any]) -> None:
        self.results["runs"].append(run)
        self.save()

    def save(self) -> None:
        (self.out / "results.json").write_text(json.dumps(self.results, indent=1, default=str))
        (self.out / "summary.md").write_text(render(self.results))

    def close(self) -> None:
        self._requests.close()

    def finish(self, elapsed: bool) -> None:
        """The end time (and the seconds since start when `elapsed`), saved; the table printed."""
        self.results["meta"]["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        if elapsed:
            self.results["meta"]["elapsed_s"] = time.monotonic() - T0
        self.save()
        print(render(self.results))
