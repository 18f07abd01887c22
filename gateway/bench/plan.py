"""`specgate plan --gpus N`: which layout should N GPUs run for this traffic?

Layouts of N GPUs: k speculative servers and N − k baseline servers, each with a GPU of its own
(k = 0..N), and N baseline + speculative pairs (one per GPU). For each layout and load multiplier the
workload (arrival times divided by the multiplier) is replayed through specgate (adaptive) on the emulated
fleet, at an accelerated time scale; the table gives mean, p90 e2e, p90 TTFT and throughput, and the
recommendation is the layout with the lowest mean at each load.

Pruning: a quick analytic pass first predicts each layout's mean latency with the cost model's step
priors, each request's true acceptance and length (the emulator's drafter over the workload's
references, as `clairvoyant` uses) and Little's law for the per-server load, every request routed to the
role that serves it sooner. Layouts predicted more than `--prune-above` × the best at every load are not
replayed, nor any beyond the `--keep` closest; the output says which and why. Single servers with dynamic
speculation are not laid out yet (the emulator's `h200-ngram-dynk` profile could serve them).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.workloads.items import WorkloadItem, load_workload


@dataclass(frozen=True, slots=True)
class Layout:
    name: str
    entries: tuple[str, ...]  # EmulatedFleet entries, one per GPU

    @property
    def roles(self) -> tuple[int, int, int]:
        return (self.entries.count("baseline"), self.entries.count("speculative"), self.entries.count("pair"))


def layouts(gpus: int) -> list[Layout]:
    out = []
    for k in range(gpus + 1):
        entries = ("speculative",) * k + ("baseline",) * (gpus - k)
        parts = [f"{n}x{role}" for n, role in ((gpus - k, "baseline"), (k, "speculative")) if n]
        out.append(Layout("+".join(parts), entries))
    out.append(Layout(f"{gpus}xpair", ("pair",) * gpus))
    return out


@dataclass(frozen=True, slots=True)
class Shape:
    prompt_tokens: int
    output_tokens: float
    tokens_per_step: float


def shapes(items: Sequence[WorkloadItem], profile: str) -> list[Shape]:
    from gateway.bench.replay.oracle import oracle_entries

    oracle = oracle_entries(items, profile)
    out = []
    for item in items:
        o = oracle.get(item.id)
        chars = len(json.dumps(item.body.get("messages") or item.body.get("prompt") or ""))
        if o is not None:
            out.append(Shape(chars // 4, float(o["output_tokens"]), float(o["tokens_per_step"])))
    return out


def analytic_mean_s(layout: Layout, work: Sequence[Shape], rate_per_s: float) -> float:
    """Mean e2e of the layout: per-role load by Little's law, each request on the role that serves it sooner.
    A pair GPU is counted as one server of whichever role is cheaper for the whole mix (its regime)."""
    from gateway.costmodel import RequestShape, StepModel, predict
    from gateway.settings import Settings

    s = Settings()
    steps = {"baseline": StepModel(s.prior_step_s, s.prior_step_per_request_s),
             "speculative": StepModel(s.prior_speculative_step_s, s.prior_speculative_step_per_request_s)}
    nb, ns, npair = layout.roles
    best = float("inf")
    for pair_role in (("baseline", "speculative") if npair else ("baseline",)):
        servers = {"baseline": nb + (npair if pair_role == "baseline" else 0),
                   "speculative": ns + (npair if pair_role == "speculative" else 0)}
        loads = dict.fromkeys(servers, 0.0)
        mean = float("inf")
        for _ in range(40):
            chosen: dict[str, list[float]] = {"baseline": [], "speculative": []}
            for w in work:
                options = []
                for role, count in servers.items():
                    if count:
                        tps = w.tokens_per_step if role == "speculative" else 1.0
                        p = predict(RequestShape(w.prompt_tokens, w.output_tokens, tps), loads[role], steps[role],
                                    0.0, s.prior_prefill_s_per_token)
                        options.append((p.e2e_s, role))
                e2e, role = min(options)
                chosen[role].append(e2e)
            total = sum(len(v) for v in chosen.values())
            for role, count in servers.items():
                if count and chosen[role]:
                    busy = rate_per_s * (len(chosen[role]) / total) * statistics.mean(chosen[role]) / count
                    loads[role] = 0.5 * loads[role] + 0.5 * busy
            mean = statistics.mean(x for v in chosen.values() for x in v)
        best = min(best, mean)
    return best


def scaled(items: Sequence[WorkloadItem], load: float) -> list[WorkloadItem]:
    t0 = items[0].t if items else 0.0
    return [dataclasses.replace(i, t=(i.t - t0) / load) for i in items]


async def _replay(items: Sequence[WorkloadItem], layout: Layout, profile: str, time_scale: float,
                  work_dir: Path) -> dict[str, Any]:
    from gateway.bench.replay.run import BenchConfig, run_policy
    from gateway.bench.replay.summary import summarize

    config = BenchConfig(workload_name="plan", policies=["adaptive"], profile=profile, time_scale=time_scale,
                         work_dir=work_dir, fleet=list(layout.entries))
    started = time.perf_counter()
    run = await run_policy(items, "adaptive", config, lambda: None)
    wall = time.perf_counter() - started
    summary = summarize(run["records"])
    span = max(r["sent_s"] + (r["e2e_s"] or 0.0) for r in run["records"]) if run["records"] else 0.0
    tokens = sum(r["completion_tokens"] or 0 for r in run["records"])
    return {"mean_e2e_s": summary["mean_e2e_s"], "p90_e2e_s": summary["p90_e2e_s"],
            "p90_ttft_s": summary["p90_ttft_s"], "tokens_per_s": round(tokens / span, 1) if span else None,
            "errors": summary["errors"], "wall_s": round(wall, 1)}


def plan(args: argparse.Namespace) -> dict[str, Any]:
    items = load_workload(args.workload)[: args.limit]
    loads = [float(x) for x in args.loads.split(",")]
    span = items[-1].t - items[0].t if len(items) > 1 else 1.0
    work = shapes(items, args.profile)
    candidates = layouts(args.gpus)
    analytic = {lay.name: {str(load): analytic_mean_s(lay, work, len(items) / span * load) for load in loads}
                for lay in candidates}
    best_at = {str(load): min(a[str(load)] for a in analytic.values()) for load in loads}
    kept, pruned = [], {}
    closeness = {lay.name: min(analytic[lay.name][k] / best_at[k] for k in best_at) for lay in candidates}
    ranked = sorted(candidates, key=lambda lay: closeness[lay.name])
    for rank, lay in enumerate(ranked):
        ratio = closeness[lay.name]
        if args.brute_force or (ratio <= args.prune_above and rank < args.keep):
            kept.append(lay)
        elif ratio > args.prune_above:
            pruned[lay.name] = f"analytic mean {ratio:.2f}x the best layout's at every load"
        else:
            pruned[lay.name] = f"analytic mean {ratio:.3f}x the best: not among the {args.keep} closest"
    kept.sort(key=candidates.index)
    rows: list[dict[str, Any]] = []
    work_dir = args.out.parent / f"{args.out.stem}-logs"
    work_dir.mkdir(parents=True, exist_ok=True)
    for load in loads:
        for lay in kept:
            res = asyncio.run(_replay(scaled(items, load), lay, args.profile, args.time_scale, work_dir))
            rows.append({"layout": lay.name, "load": load, "analytic_mean_s": round(analytic[lay.name][str(load)], 3),
                         **res})
            print(f"  load {load:g} {lay.name:<28} mean {res['mean_e2e_s']:.3f} s  p90 {res['p90_e2e_s']:.3f}  "
                  f"p90 TTFT {res['p90_ttft_s']:.3f}  ({res['wall_s']} s)", flush=True)
    recommendation = {}
    for load in loads:
        at = [r for r in rows if r["load"] == load and not r["errors"]]
        if at:
            recommendation[str(load)] = min(at, key=lambda r: r["mean_e2e_s"])["layout"]
    return {"gpus": args.gpus, "workload": args.workload, "profile": args.profile, "loads": loads,
            "requests": len(items), "time_scale": args.time_scale, "pruned": pruned, "rows": rows,
            "recommendation": recommendation, "command": "specgate plan " + " ".join(args.argv)}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="specgate plan", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gpus", type=int, required=True)
    p.add_argument("--workload", default="demo-mixed", help="a workload file or a built-in name")
    p.add_argument("--profile", default="h200-ngram")
    p.add_argument("--loads", default="0.5,1,2", help="load multipliers of the workload's arrival rate")
    p.add_argument("--time-scale", type=float, default=0.2, help="wall seconds per simulated second")
    p.add_argument("--limit", type=int, default=120, help="requests replayed per layout and load")
    p.add_argument("--prune-above", type=float, default=1.15,
                   help="skip layouts predicted this many times the best at every load")
    p.add_argument("--keep", type=int, default=3, help="replay at most this many layouts, the analytically closest")
    p.add_argument("--brute-force", action="store_true", help="replay every layout (no pruning)")
    p.add_argument("--out", type=Path, default=Path("specgate-plan/plan.json"))
    return p


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    args.argv = argv
    if args.gpus < 1 or args.time_scale <= 0 or args.limit < 2:
        print("specgate plan: --gpus ≥ 1, --time-scale > 0, --limit ≥ 2", file=sys.stderr)
        return 2
    started = time.perf_counter()
    doc = plan(args)
    doc["wall_s"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    for name, why in doc["pruned"].items():
        print(f"  pruned {name}: {why}")
    for load, layout in doc["recommendation"].items():
        print(f"On {args.gpus} GPUs of this traffic at {load}x its rate: {layout.replace('+', ' + ')}")
    print(f"results: {args.out} ({doc['wall_s']} s)")
    return 0
