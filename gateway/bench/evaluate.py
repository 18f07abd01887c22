"""`specgate evaluate`: the adaptive policy against the static ones and the clairvoyant anchor, over a
matrix of emulated profiles × workloads, one `specgate bench` run per cell; writes a markdown table.

    specgate evaluate [--quick] [--out-dir gateway/bench/results/eval]

Targets (issue 4): adaptive mean e2e ≤ 0.90 × the better static policy on mixed workloads and ≤ 1.02 ×
on every workload; within 5% of clairvoyant; p90 TTFT no worse than the better static by more than 5%;
median prediction error ≤ 15%.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

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


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="specgate evaluate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out-dir", type=Path, default=Path("gateway/bench/results/eval"))
    parser.add_argument("--quick", action="store_true", help="two cells only")
    parser.add_argument("--only-summarize", action="store_true", help="rebuild the table from existing files")
    parser.add_argument("--gateways", type=int, default=1, help="gateway processes per cell, behind haproxy when > 1")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
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
    table = markdown(rows)
    date = datetime.now(UTC).isoformat(timespec="seconds")
    (args.out_dir / "README.md").write_text(
        f"# Adaptive routing evaluation ({date})\n\nEmulated pair, one simulated GPU; mean end-to-end seconds "
        f"(simulated). Command: `specgate evaluate{' --quick' if args.quick else ''}"
        f"{f' --gateways {args.gateways}' if args.gateways > 1 else ''}`; per-cell commands and "
        f"machine in each JSON file.\n\n{table}")
    print(table)
    return 0
