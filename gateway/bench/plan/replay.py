"""Replay a workload through specgate (adaptive) on one layout of the emulated fleet."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.bench.plan.layouts import Layout
from gateway.workloads.items import WorkloadItem


def scaled(items: Sequence[WorkloadItem], load: float) -> list[WorkloadItem]:
    """The workload at `load` times its arrival rate (send times divided by `load`, from the first)."""
    t0 = items[0].t if items else 0.0
    return [dataclasses.replace(i, t=(i.t - t0) / load) for i in items]


async def replay(items: Sequence[WorkloadItem], layout: Layout, profile: str, time_scale: float,
                 work_dir: Path, repeat: int = 1) -> dict[str, Any]:
    """Mean, p90 e2e, p90 TTFT (simulated s), throughput (completion tokens per simulated s), errors, wall."""
    from gateway.bench.replay.run import BenchConfig, run_policy
    from gateway.bench.replay.summary import summarize

    config = BenchConfig(workload_name="plan", policies=["adaptive"], profile=profile, time_scale=time_scale,
                         work_dir=work_dir, fleet=list(layout.entries))
    started = time.perf_counter()
    run = await run_policy(items, "adaptive", config, lambda: None, repeat=repeat)
    wall = time.perf_counter() - started
    records = run["records"]
    summary = summarize(records)
    span = max(r["sent_s"] + (r["e2e_s"] or 0.0) for r in records) if records else 0.0
    tokens = sum(r["completion_tokens"] or 0 for r in records)
    return {"mean_e2e_s": summary["mean_e2e_s"], "p90_e2e_s": summary["p90_e2e_s"],
            "p90_ttft_s": summary["p90_ttft_s"], "tokens_per_s": round(tokens / span, 1) if span else None,
            "errors": summary["errors"], "wall_s": round(wall, 1)}
