"""Per server role and task kind: adaptive's mean end-to-end against the best static fleet's on the same requests
(the statics from `results/peers-2026-12-05/cells`), to see where a cell's gap to the static fleet lies.

    python where.py RUN.json WINDOW
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

PEERS = Path(__file__).resolve().parents[1] / "peers-2026-12-05" / "cells"

with open(sys.argv[1]) as f:
    run = json.load(f)["policies"]["adaptive"]["requests"]
with gzip.open(PEERS / f"cell--{sys.argv[2]}--2+2.json.gz") as f:
    pol = json.load(f)["policies"]
statics = {n: {r["id"]: r for r in p["requests"]} for n, p in pol.items() if n.startswith("least_loaded@")}
best = min(statics, key=lambda n: statistics.mean(r["e2e_s"] for r in statics[n].values()))
groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
for r in run:
    groups[(r["backend"], r["kind"])].append(r)
total_gap = sum(r["e2e_s"] - statics[best][r["id"]]["e2e_s"] for r in run)
print(f"best static {best}; adaptive {statistics.mean(r['e2e_s'] for r in run):.3f} s, the static on the same "
      f"requests {statistics.mean(statics[best][r['id']]['e2e_s'] for r in run):.3f} s")
print("| role | kind | requests | adaptive (s) | best static, same requests (s) | share of the gap |")
print("|---|---|---|---|---|---|")
for (role, kind), rs in sorted(groups.items()):
    gap = sum(r["e2e_s"] - statics[best][r["id"]]["e2e_s"] for r in rs)
    print(f"| {role} | {kind} | {len(rs)} | {statistics.mean(r['e2e_s'] for r in rs):.3f} | "
          f"{statistics.mean(statics[best][r['id']]['e2e_s'] for r in rs):.3f} | {gap / total_gap:.0%} |")
