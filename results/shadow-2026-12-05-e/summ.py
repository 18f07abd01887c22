"""Adaptive ÷ the better static per cell, and per group (profile, time scale, held-out family or built-ins) and
variant: median, worst, runs above 1.05 and 1.01.

    python results/shadow-2026-12-05-e/summ.py RUNS_DIR     # the TAG--PROFILE--TRACE--xSCALE--sSEED.json of cell.sh
"""
from __future__ import annotations

import collections
import glob
import json
import os
import statistics
import sys


def main() -> None:
    runs: dict[str, dict[str, tuple[float, float, int]]] = collections.defaultdict(dict)
    for f in glob.glob(sys.argv[1] + "/*.json"):
        tag, key = os.path.basename(f)[:-5].split("--", 1)
        with open(f) as fh:
            p = next(iter(json.load(fh)["policies"].values()))["summary"]
        runs[key][tag] = (p["mean_e2e_s"], p["routed"].get("speculative", 0) / max(p["requests"], 1), p["errors"])
    Groups = dict[tuple[str, ...], dict[str, list[float]]]
    groups: Groups = collections.defaultdict(lambda: collections.defaultdict(list))
    rows = []
    for key, v in sorted(runs.items()):
        if "B" not in v or "S" not in v:
            continue
        prof, trace, scale, _ = key.split("--")
        kind = "held-out family" if trace.startswith("bursty-") else "built-ins"
        best = min(v["B"][0], v["S"][0])
        row: dict[str, object] = {"profile": prof, "trace": trace, "scale": scale, "B": v["B"][0], "S": v["S"][0]}
        for t, (m, share, err) in v.items():
            if t not in ("B", "S"):
                groups[(prof, scale, kind)][t].append(m / best)
                groups[("all", kind)][t].append(m / best)
                row[t] = (m / best, share, err)
        rows.append(row)
    tags = sorted({t for r in rows for t in r if t not in ("profile", "trace", "scale", "B", "S")})
    print("| profile | trace | scale | baseline s | speculative s | " + " | ".join(tags) + " |")
    print("|---|---|---|---|---|" + "---|" * len(tags))
    for r in rows:
        cells = []
        for t in tags:
            x = r.get(t)
            err = f" err {x[2]}" if isinstance(x, tuple) and x[2] else ""
            cells.append("-" if not isinstance(x, tuple) else f"{x[0]:.3f} ({100 * x[1]:.0f}%){err}")
        head = f"| {r['profile']} | {r['trace']} | {r['scale']} | {r['B']:.3f} | {r['S']:.3f} | "
        print(head + " | ".join(cells) + " |")
    print()
    print("| group | variant | n | median | worst | > 1.05 | > 1.01 |")
    print("|---|---|---|---|---|---|---|")
    for g in sorted(groups):
        for t in tags:
            xs = groups[g][t]
            if xs:
                print(f"| {' '.join(g)} | {t} | {len(xs)} | {statistics.median(xs):.3f} | {max(xs):.3f} | "
                      f"{sum(x > 1.05 for x in xs)} | {sum(x > 1.01 for x in xs)} |")


if __name__ == "__main__":
    main()
