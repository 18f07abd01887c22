"""The cell table of this folder: per (workload, fleet), adaptive before (main) and after (this branch), 3 seeds
each, against the three peer routers and the hindsight class map, all run back to back per cell.
Median prediction error per seed from the gateway's access logs (|predicted - observed| / observed).

    python table.py DIR   (DIR holds {base,after}--W--F--adaptive.json[.gz] (+ -logs/), peers--W--F.json[.gz])
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import statistics
import sys
from typing import Any

PEERS = ("vllm-router:cache_aware", "vllm-router:power_of_two", "sglang-router:cache_aware")


def load(path: str) -> dict[str, Any]:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def per_seed(pol: dict[str, Any]) -> list[float]:
    return [r["mean_e2e_s"] for r in pol["runs"]] if pol.get("runs") else [pol["summary"]["mean_e2e_s"]]


def pred_errors(logdir: str) -> list[float]:
    out = []
    for log in sorted(glob.glob(f"{logdir}/gateway-adaptive*.log")):
        errs = []
        with open(log) as f:
            for line in f:
                at = line.find("{")
                if at < 0 or '"request"' not in line:
                    continue
                try:
                    rec = json.loads(line[at:])
                except ValueError:
                    continue
                p, o = rec.get("predicted_s"), rec.get("observed_s")
                if rec.get("event") == "request" and p is not None and o:
                    errs.append(abs(p - o) / o)
        if errs:
            out.append(statistics.median(errs))
    return out


def spec_share(pol: dict[str, Any]) -> str:
    return "/".join(f"{r['speculative_share']:.2f}" for r in pol.get("runs", []))


def rows(folder: str) -> list[str]:
    out = []
    for path in sorted(glob.glob(f"{folder}/peers--*.json*")):
        _, w, f = os.path.basename(path).split(".json")[0].split("--")
        others = load(path)["policies"]
        peers = {k: v["summary"]["mean_e2e_s"] for k, v in others.items() if k in PEERS}
        best = min(peers.items(), key=lambda kv: kv[1])
        hind = others["hindsight"]["summary"]["mean_e2e_s"] if "hindsight" in others else None
        for tag in ("base", "after"):
            ap = glob.glob(f"{folder}/{tag}--{w}--{f}--adaptive.json*")
            if not ap:
                continue
            pol = load(ap[0])["policies"]["adaptive"]
            seeds = per_seed(pol)
            med = statistics.median(seeds)
            errs = pred_errors(ap[0].split(".json")[0] + "-logs")
            out.append(
                f"| {w} | {f} | {tag} | {', '.join(f'{s:.3f}' for s in seeds)} | {spec_share(pol)} | "
                f"{best[1]:.3f} ({best[0]}) | {hind:.3f} | **{med / best[1]:.3f}** | "
                f"{', '.join(f'{s / best[1]:.3f}' for s in seeds)} | {med / hind:.3f} | "
                f"{', '.join(f'{e:.3f}' for e in errs)} |")
        listed = " / ".join(f"{name} {v:.3f}" for name, v in peers.items())
        out.append(f"| | | peers | {listed} | | | | | | | |")
    return out


if __name__ == "__main__":
    print("| workload | fleet | code | adaptive mean e2e (s), seeds 1-3 | speculative share | best peer (s) | "
          "hindsight map (s) | ÷ best peer (median) | ÷ best peer per seed | ÷ hindsight | "
          "median pred. error per seed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows(sys.argv[1])))
