"""`specgate evaluate`: the adaptive policy against the static ones and the clairvoyant anchor, over a
matrix of emulated profiles × workloads, one `specgate bench` run per cell; writes a markdown table.

    specgate evaluate [--quick] [--out-dir results/eval]

Targets: adaptive mean e2e ≤ 0.90 × the better static policy on mixed workloads and ≤ 1.02 ×
on every workload; within 5% of clairvoyant; p90 TTFT no worse than the better static by more than 5%;
median prediction error ≤ 15%.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from gateway.bench.cell import SEEDS, bench_cell, peer_ratio, write_table
from gateway.bench.fleet.cells import peers_markdown
from gateway.bench.mix_accuracy import WINDOW, accuracy_row
from gateway.bench.mix_accuracy import markdown as accuracy_markdown

MATRIX: list[tuple[str, str, float]] = [
    ("h200-ngram", "mixed-low", 0.25),
    ("h200-ngram", "mixed-medium", 0.5),
    ("h200-ngram", "mixed-high", 1.0),
    ("h200-ngram", "structured-heavy", 0.5),
    ("h200-ngram", "creative-heavy", 0.5),
    ("h200-draft", "mixed-medium", 0.5),
    ("h200-draft", "structured-heavy", 0.5),
    ("b200-ngram", "mixed-medium", 0.5),
    ("b200-draft", "mixed-medium", 0.5),
]
QUICK = [MATRIX[1], MATRIX[5]]
POLICIES = "baseline,speculative,rules,adaptive,clairvoyant"
ROBUST_WORKLOADS = ("demo-mixed", "mixed-low", "mixed-medium", "mixed-high", "mixed-phases", "structured-heavy",
                    "creative-heavy", "bursty")
ROBUST_SCALES = (1.0, 4.0)


def row(path: Path) -> dict[str, object]:
    doc = json.loads(path.read_text())
    s = {name: p["summary"] for name, p in doc["policies"].items()}
    best_name = min(("baseline", "speculative"), key=lambda n: s[n]["mean_e2e_s"])
    best = s[best_name]
    a, c = s["adaptive"], s["clairvoyant"]
    return {
        "profile": doc["profile"], "workload": doc["workload"],
        **{f"{n}_mean_s": round(v["mean_e2e_s"], 3) for n, v in s.items()},
        "best_static": best_name,
        "adaptive_vs_best": round(a["mean_e2e_s"] / best["mean_e2e_s"], 3),
        "adaptive_vs_clairvoyant": round(a["mean_e2e_s"] / c["mean_e2e_s"], 3),
        "adaptive_p90_ttft_vs_best": round(a["p90_ttft_s"] / max(best["p90_ttft_s"], 1e-9), 3),
        "adaptive_to_speculative": a["routed"].get("speculative", 0),
        "requests": a["requests"],
        "prediction_error_median": doc["policies"]["adaptive"].get("prediction", {}).get("median_error_ratio"),
    }


def markdown(rows: list[dict[str, object]]) -> str:
    head = ("| profile | workload | baseline | speculative | rules | clairvoyant | adaptive | adaptive ÷ best static "
            "| ÷ clairvoyant | p90 TTFT ÷ best | → spec | pred. err (median) |")
    lines = [head, "|" + "---|" * 12]
    for r in rows:
        lines.append(
            f"| {r['profile']} | {r['workload']} | {r.get('baseline_mean_s')} | {r.get('speculative_mean_s')} | "
            f"{r.get('rules_mean_s')} | {r.get('clairvoyant_mean_s')} | {r.get('adaptive_mean_s')} | "
            f"{r['adaptive_vs_best']} | {r['adaptive_vs_clairvoyant']} | {r['adaptive_p90_ttft_vs_best']} | "
            f"{r['adaptive_to_speculative']}/{r['requests']} | {r['prediction_error_median']} |")
    return "\n".join(lines) + "\n"


def robust_row_of(doc: dict[str, Any]) -> dict[str, object]:
    """Adaptive over seeds against the better static server of one cell (`bench --repeat` with one seed each)."""
    pol = doc["policies"]
    best_name = min(("baseline", "speculative"), key=lambda n: pol[n]["summary"]["mean_e2e_s"])
    best = pol[best_name]["summary"]["mean_e2e_s"]
    runs: dict[int, list[dict[str, Any]]] = {}
    for r in pol["adaptive"]["requests"]:
        runs.setdefault(r.get("repeat", 0), []).append(r)
    means = sorted(statistics.mean(x["e2e_s"] for x in rs if x["e2e_s"] is not None) for rs in runs.values())
    shares = [sum(1 for x in rs if x["backend"] == "speculative") / len(rs) for rs in runs.values()]
    return {
        "profile": doc["profile"], "workload": doc["workload"], "time_scale": doc["time_scale"],
        "baseline_mean_s": round(pol["baseline"]["summary"]["mean_e2e_s"], 3),
        "speculative_mean_s": round(pol["speculative"]["summary"]["mean_e2e_s"], 3),
        "adaptive_means_s": [round(m, 3) for m in means], "best_static": best_name,
        "adaptive_median_vs_best": round(statistics.median(means) / best, 3),
        "adaptive_worst_vs_best": round(max(means) / best, 3),
        "speculative_share_spread_points": round(100 * (max(shares) - min(shares)), 1),
        "speculative_shares": [round(100 * x, 1) for x in shares], **peer_ratio(pol, statistics.median(means)),
    }


def robust_markdown(rows: list[dict[str, object]]) -> str:
    lines = ["| profile | workload | scale | baseline | speculative | adaptive (seeds) | median ÷ best | worst ÷ best "
             "| → spec % (seeds) | spread (points) |", "|" + "---|" * 10]
    for r in rows:
        lines.append(f"| {r['profile']} | {r['workload']} | {r['time_scale']} | {r['baseline_mean_s']} | "
                     f"{r['speculative_mean_s']} | {r['adaptive_means_s']} | {r['adaptive_median_vs_best']} | "
                     f"{r['adaptive_worst_vs_best']} | {r['speculative_shares']} | "
                     f"{r['speculative_share_spread_points']} |")
    return "\n".join(lines) + "\n"


def spread_over_scales(rows: list[dict[str, Any]]) -> str:
    """Per workload: the share sent to speculative over every seed at every time scale (target: ≤ 10 points)."""
    shares: dict[str, list[float]] = {}
    for r in rows:
        shares.setdefault(str(r["workload"]).split(" (")[0], []).extend(r["speculative_shares"])
    lines = ["| workload | → spec % (all seeds and scales) | spread (points) |", "|---|---|---|"]
    lines += [f"| {w} | {xs} | {round(max(xs) - min(xs), 1)} |" for w, xs in shares.items()]
    return "\n".join(lines) + "\n"


MIX_ACCURACY_ABOUT = ("How right the regime was: the mix ratio it held at the end of the cell's last adaptive run "
                      "(the window's predicted cost on the baseline over the speculative server's) against the static "
                      f"runs' mean end-to-end ratio over the trace's last {WINDOW} requests "
                      "(`python -m gateway.bench.mix_accuracy`).")


def family_workloads(out_dir: Path, count: int, first_seed: int) -> dict[str, str]:
    """Members `first_seed` .. + `count` - 1 of the generated bursty family, written under `out_dir/family/`:
    name -> file (`gateway.workloads.family`)."""
    from gateway.workloads.family import member
    from gateway.workloads.items import write_workload

    folder = out_dir / "family"
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for seed in range(first_seed, first_seed + count):
        path = folder / f"bursty-{seed}.jsonl"
        if not path.exists():
            write_workload(member(seed), path)
        files[f"bursty-{seed}"] = str(path)
    return files


def run_robust(args: argparse.Namespace) -> int:
    """Each one-GPU cell at several time scales, adaptive with several seeds (`bench --repeat`, seed + repeat)."""
    workloads = args.workloads.split(",") if args.workloads is not None else list(ROBUST_WORKLOADS)
    workloads = [w for w in workloads if w]
    files = family_workloads(args.out_dir, args.family, args.family_seed) if args.family else {}
    workloads += list(files)
    scales = [float(x) for x in args.scales.split(",")] if args.scales else list(ROBUST_SCALES)
    rows: list[dict[str, Any]] = []
    accuracy: list[dict[str, object]] = []  # the regime's mix at the end of each cell against the statics
    for workload in workloads:
        for scale in scales:
            limit = f"--first{args.limit}" if args.limit else ""
            out = args.out_dir / f"robust--{args.profile}--{workload}--x{scale:g}{limit}.json"
            if not args.only_summarize:
                bench_cell(["--workload", files.get(workload, workload), "--profile", args.profile,
                            "--time-scale", str(scale),
                            "--gateways", str(args.gateways), *(["--limit", str(args.limit)] if args.limit else [])],
                           ["baseline", "speculative"], out, peers=args.peers)
            # the full cell, else a shortened one (`--limit`) run for it
            for path in sorted(args.out_dir.glob(f"robust--{args.profile}--{workload}--x{scale:g}*.json")):
                first = path.stem.partition("--first")[2]
                if path.stem.endswith("--others") or (first and not first.isdigit()):
                    continue
                doc = json.loads(path.read_text())
                rows.append(robust_row_of(doc) | {"workload": f"{workload} (first {first})" if first else workload})
                accuracy.append(accuracy_row(f"{workload} x{scale:g}{limit}", doc, doc))
                break
    write_table(args.out_dir / "ROBUST.md", "Robustness: adaptive over seeds and time scales",
                f"One emulated pair on one simulated GPU; mean end-to-end seconds (simulated). Adaptive runs "
                f"{len(SEEDS)} seeds (SPECGATE_RANDOM_SEED 1..3); the static servers once. Command: `specgate "
                f"evaluate --robust --profile {args.profile} --workloads {','.join(workloads)} --scales "
                f"{','.join(f'{x:g}' for x in scales)}{' --peers ' + args.peers if args.peers else ''}`.",
                robust_markdown(rows) + peers_markdown(rows) + "\n" + spread_over_scales(rows)
                + f"\n{MIX_ACCURACY_ABOUT}\n\n" + accuracy_markdown(accuracy))
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="specgate evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=Path("results/eval"))
    parser.add_argument("--quick", action="store_true", help="two cells only")
    parser.add_argument("--only-summarize", action="store_true", help="rebuild the table from existing files")
    parser.add_argument("--robust", action="store_true",
                        help="one-GPU robustness: every built-in workload, time scales 1 and 4, adaptive 3 seeds")
    parser.add_argument("--profile", default="h200-ngram", help="--robust: the emulated profile")
    parser.add_argument("--workloads", default=None,
                        help="--robust: comma-separated subset of workloads ('' with --family: the family alone)")
    parser.add_argument("--scales", default=None, help="--robust: comma-separated time scales (default 1,4)")
    parser.add_argument("--family", type=int, default=0,
                        help="--robust: also this many members of the generated bursty family (unseen traces)")
    parser.add_argument("--family-seed", type=int, default=1, help="--robust: the family's first member")
    parser.add_argument("--limit", type=int, default=None,
                        help="--robust: only each workload's first N requests (a slow cell at time scale 4)")
    parser.add_argument("--fleet", action="store_true", help="fleet cells: see gateway.bench.fleet.cells")
    parser.add_argument("--gateways", type=int, default=1, help="--robust/--fleet: gateway replicas behind haproxy")
    parser.add_argument("--peers", default="",
                        help="--robust/--fleet: real peer routers run in every cell (bench --peers), e.g. "
                             "vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware; the table "
                             "adds adaptive ÷ the best peer")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.robust:
        return run_robust(args)
    if args.fleet:
        from gateway.bench.fleet.cells import run_fleet_cells

        return run_fleet_cells(args)
    cells = QUICK if args.quick else MATRIX
    rows = []
    for profile, workload, scale in cells:
        out = args.out_dir / f"{profile}--{workload}.json"
        if not args.only_summarize:
            cmd = [sys.executable, "-m", "gateway", "bench", "--workload", workload, "--profile", profile,
                   "--policies", POLICIES, "--time-scale", str(scale), "--out", str(out),
                   "--gateways", str(args.gateways)]
            print("$", " ".join(cmd[2:]), flush=True)
            subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
        if out.exists():
            rows.append(row(out))
    write_table(args.out_dir / "README.md", "Adaptive routing evaluation",
                f"Emulated pair, one simulated GPU; mean end-to-end seconds (simulated). Command: `specgate "
                f"evaluate{' --quick' if args.quick else ''}`; per-cell commands and machine in each JSON file.",
                markdown(rows))
    return 0
