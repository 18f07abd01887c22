"""`specgate evaluate --fleet`: routing on fleets where each server has a GPU of its own.

Per cell (workload × fleet of N GPUs, emulated, time scale 1): the static fleets of the same size (all
baseline, all speculative: `least_loaded@Nxbaseline`, `least_loaded@Nxspeculative`), the policies users
would otherwise run on the mixed fleet (`round_robin`, `least_loaded`, `rules`), the `hindsight` map
(the best fixed (class, temperature) -> role map, chosen from the static fleets' per-request results) and
`adaptive` with three seeds. Writes one JSON per cell and `FLEET.md`.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from gateway.bench.cell import SEEDS, bench_cell, peer_ratio, write_table
from gateway.bench.peers.spec import is_peer

CELLS: list[tuple[str, str, float]] = [  # workload, mixed fleet, time scale
    ("demo-mixed", "baseline,speculative", 1.0),
    ("mixed-medium", "baseline,speculative", 1.0),
    ("mixed-high", "2xbaseline,2xspeculative", 1.0),
]


def _statics(fleet: str) -> list[str]:
    size = sum(int(p.split("x")[0]) if p[0].isdigit() else 1 for p in fleet.split(","))
    return [f"least_loaded@{size}xbaseline", f"least_loaded@{size}xspeculative"]


def fleet_row(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text())
    pol = doc["policies"]
    mean = {name: p["summary"]["mean_e2e_s"] for name, p in pol.items()}
    statics = [n for n in pol if "@" in n and not is_peer(n)]
    best_static = min(statics, key=lambda n: mean[n])
    runs: dict[int, list[dict[str, Any]]] = {}
    for r in pol["adaptive"]["requests"]:
        runs.setdefault(r.get("repeat", 0), []).append(r)
    adaptive = sorted(statistics.mean(x["e2e_s"] for x in rs if x["e2e_s"] is not None) for rs in runs.values())
    med = statistics.median(adaptive)
    shares = [round(100 * sum(1 for x in rs if x["backend"] == "speculative") / len(rs)) for rs in runs.values()]
    pred = pol["adaptive"].get("prediction", {}).get("median_error_ratio")
    return {
        "workload": doc["workload"], "fleet": "+".join(doc["fleet"]), "time_scale": doc["time_scale"],
        "means": {n: None if v is None else round(v, 3) for n, v in mean.items()},
        "adaptive_seeds": [round(x, 3) for x in adaptive],
        "best_static": best_static,
        "adaptive_vs_best_static": round(med / mean[best_static], 3),
        "adaptive_vs_least_loaded": round(med / mean["least_loaded"], 3) if "least_loaded" in mean else None,
        "adaptive_vs_hindsight": round(med / mean["hindsight"], 3) if "hindsight" in mean else None,
        "adaptive_to_speculative_pct": shares, "prediction_error_median": pred, **peer_ratio(pol, med),
    }


def fleet_markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| workload | fleet | best static fleet | round_robin | least_loaded | rules | hindsight "
             "| adaptive (seeds) | ÷ best static | ÷ least_loaded | ÷ hindsight | → spec % | pred. err |",
             "|" + "---|" * 13]
    for r in rows:
        m = r["means"]
        lines.append(
            f"| {r['workload']} | {r['fleet']} | {m[r['best_static']]} ({r['best_static']}) | {m.get('round_robin')} | "
            f"{m.get('least_loaded')} | {m.get('rules')} | {m.get('hindsight')} | {r['adaptive_seeds']} | "
            f"{r['adaptive_vs_best_static']} | {r['adaptive_vs_least_loaded']} | {r['adaptive_vs_hindsight']} | "
            f"{r['adaptive_to_speculative_pct']} | {r['prediction_error_median']} |")
    return "\n".join(lines) + "\n" + peers_markdown(rows)


def peers_markdown(rows: list[dict[str, Any]]) -> str:
    """Specgate (adaptive, median of seeds) over the best peer router per cell, when the cells ran peers."""
    rows = [r for r in rows if r.get("peer_means")]
    if not rows:
        return ""
    lines = ["", "| workload | fleet | peers (mean e2e s) | best peer | adaptive ÷ best peer |",
             "|---|---|---|---|---|"]
    for r in rows:
        peers = ", ".join(f"{n} {m}" if m is not None else f"{n} did not start" for n, m in r["peer_means"].items())
        lines.append(f"| {r['workload']} | {r.get('fleet', 'pair')} | {peers} | {r['best_peer']} | "
                     f"{r['adaptive_vs_best_peer']} |")
    return "\n".join(lines) + "\n"


def run_fleet_cells(args: argparse.Namespace) -> int:
    cells = [c for c in CELLS if not args.workloads or c[0] in args.workloads.split(",")]
    rows = []
    for workload, fleet, scale in cells:
        stem = f"fleet--{workload}--{fleet.replace(',', '+')}"
        out = args.out_dir / f"{stem}.json"
        if not args.only_summarize:
            bench_cell(["--workload", workload, "--fleet", fleet, "--time-scale", str(scale), "--gateways",
                        str(args.gateways)], [*_statics(fleet), "round_robin", "least_loaded", "rules", "hindsight"],
                       out, peers=args.peers)
        if out.exists():
            rows.append(fleet_row(out))
    write_table(args.out_dir / "FLEET.md", "Fleets: one server per GPU",
                f"Emulated h200-ngram servers, each on its own simulated GPU; mean end-to-end seconds (simulated). "
                f"Static fleets and the other policies run once, adaptive with {len(SEEDS)} seeds (median "
                f"compared). Command: `specgate evaluate --fleet"
                f"{' --peers ' + args.peers if args.peers else ''}`.", fleet_markdown(rows))
    return 0
