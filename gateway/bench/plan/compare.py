"""Pruned plans against brute force: `python -m gateway.bench.plan.compare DIR...` reads every
`W-gpusN-brute.json` in the DIRs (a later DIR's file replaces an earlier one of the same name) and prints,
per workload, N and load, the pruned recommendation, the brute force's best layout, and the brute-force mean
of the recommended layout over the best mean.

The pruned recommendation is made from the brute-force run's own replays, among the layouts today's pruning
pass (`cli.select`, default `--prune-above` and `--keep`) keeps given the run's analytic means: pruning and the
tie rule are judged, not replay noise. Brute-force files from before `--brute-force` recorded what pruning keeps
(no `recommendation_pruned`) are compared with a separate pruned run `W-gpusN.json` beside them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gateway.bench.plan.cli import parser, recommend, select


def rows(*directories: Path) -> list[dict[str, Any]]:
    out = []
    defaults = parser().parse_args(["--gpus", "1"])
    latest = {path.name: path for directory in directories for path in sorted(directory.glob("*-brute.json"))}
    for _, brute_path in sorted(latest.items()):
        pruned_path = brute_path.with_name(brute_path.name.replace("-brute", ""))
        brute = json.loads(brute_path.read_text())
        if "recommendation_pruned" in brute:
            names, _ = select(brute["layouts"], brute["analytic"], defaults.prune_above, defaults.keep)
            kept = [r for r in brute["rows"] if r["layout"] in names]
            chosen = recommend(brute["rows"], brute["analytic"], brute["loads"], defaults.tie, set(names))
            pruned = {**brute, "recommendation": chosen, "rows": kept,
                      "wall_s": round(sum(r["wall_s"] for r in kept), 1)}
        elif pruned_path.exists():
            pruned = json.loads(pruned_path.read_text())
        else:
            continue
        for load, chosen in pruned["recommendation"].items():
            means = {r["layout"]: r["mean_e2e_s"] for r in brute["rows"] if str(r["load"]) == load}
            best = min(means, key=lambda name: means[name])
            out.append({"workload": pruned["workload"], "gpus": pruned["gpus"], "load": load, "chosen": chosen,
                        "best": best, "ratio": round(means[chosen] / means[best], 4),
                        "pruned_wall_s": pruned["wall_s"], "brute_wall_s": brute["wall_s"],
                        "replayed": len({r["layout"] for r in pruned["rows"]}), "layouts": len(means)})
    return out


def markdown(table: list[dict[str, Any]]) -> str:
    lines = ["| workload | GPUs | load | recommended (pruned) | best (brute force) | brute mean of recommended ÷ best "
             "| replayed / layouts | wall pruned / brute s |", "|" + "---|" * 8]
    for r in table:
        lines.append(f"| {r['workload']} | {r['gpus']} | {r['load']} | {r['chosen']} | {r['best']} | {r['ratio']} "
                     f"| {r['replayed']} / {r['layouts']} | {r['pruned_wall_s']} / {r['brute_wall_s']} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    table = rows(*(Path(arg) for arg in argv))
    print(markdown(table))
    worst = max((r["ratio"] for r in table), default=None)
    print(f"\nworst ratio: {worst}")
    return 0 if worst is not None and worst <= 1.03 else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
