"""Section 4's table: after against after2 (+ the max_tokens level), 3 seeds each, and a second run of the peers
and the hindsight map, back to back per cell.   python table2.py DIR"""

from __future__ import annotations

import glob
import gzip
import json
import os
import statistics
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))
from table import pred_errors


def load(path: str) -> dict[str, Any]:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


for path in sorted(glob.glob(f"{sys.argv[1]}/peers--*.json*")):
    _, w, f = os.path.basename(path).split(".json")[0].split("--")
    others = {k: v["summary"]["mean_e2e_s"] for k, v in load(path)["policies"].items()}
    hind = others.pop("hindsight")
    best = min(others.items(), key=lambda kv: kv[1])
    print(f"{w} {f}: peers " + ", ".join(f"{k} {v:.3f}" for k, v in others.items()) + f"; hindsight {hind:.3f}")
    for tag in ("after", "after2"):
        ap = glob.glob(f"{sys.argv[1]}/{tag}--{w}--{f}--adaptive.json*")
        pol = load(ap[0])["policies"]["adaptive"]
        seeds = [r["mean_e2e_s"] for r in pol["runs"]]
        med = statistics.median(seeds)
        errs = pred_errors(ap[0].split(".json")[0] + "-logs")
        share = "/".join(f"{r['speculative_share']:.2f}" for r in pol["runs"])
        print(f"| {w} | {f} | {tag} | {', '.join(f'{s:.3f}' for s in seeds)} | "
              f"{share} | {best[1]:.3f} ({best[0]}) | "
              f"{hind:.3f} | **{med / best[1]:.3f}** | {', '.join(f'{s / best[1]:.3f}' for s in seeds)} | "
              f"{med / hind:.3f} | {', '.join(f'{e:.3f}' for e in errs)} |")
