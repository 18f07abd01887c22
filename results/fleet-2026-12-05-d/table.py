"""The cell table: per (workload, fleet), specgate adaptive (its seeds; the median of 2 is their mean) against
the best static fleet of the same size and the best peer router, with mean TTFT and prefix hit rates.
Usage: python table.py DIR TAG  (DIR holds TAG--W--F--adaptive.json[.gz] and TAG--W--F--others.json[.gz])"""

from __future__ import annotations

import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
from summarize import load, load_range, runs

PEERS = ("vllm-router:cache_aware", "vllm-router:power_of_two", "sglang-router:cache_aware")


def cell_rows(folder: str, tag: str) -> list[str]:
    rows = []
    for path in sorted(glob.glob(f"{folder}/{tag}--*--adaptive.json*")):
        _, w, f = os.path.basename(path).split("--")[:3]
        ad = runs(load(path)["policies"]["adaptive"])
        others_paths = glob.glob(f"{folder}/{tag}--{w}--{f}--others.json*")
        others = {k: runs(v)[0] for k, v in load(others_paths[0])["policies"].items()} if others_paths else {}
        if not any(k.startswith("least_loaded@") for k in others):
            continue  # not a cell against the static fleets and all three peers (the Mooncake runs: moon_table.py)
        med = statistics.median(r["e2e"] for r in ad)
        statics = {k: v for k, v in others.items() if k not in PEERS}
        peers = {k: v for k, v in others.items() if k in PEERS}
        bs = min(statics.items(), key=lambda kv: kv[1]["e2e"]) if statics else None
        bp = min(peers.items(), key=lambda kv: kv[1]["e2e"]) if peers else None
        seeds = ", ".join(f"{r['e2e']:.3f}" for r in ad)
        ttft = statistics.median(r["ttft"] for r in ad)
        hit = statistics.median(r["hit"] for r in ad)
        s_txt = f"{bs[1]['e2e']:.3f} ({bs[0].replace('least_loaded@', '')})" if bs else "-"
        p_txt = f"{bp[1]['e2e']:.3f} ({bp[0]})" if bp else "-"
        r_s = f"{med / bs[1]['e2e']:.3f}" if bs else "-"
        r_p = f"**{med / bp[1]['e2e']:.3f}**" if bp else "-"
        peer_hits = " / ".join(f"{v['hit']:.3f}" for v in peers.values()) or "-"
        errors = sum(r["errors"] for r in ad) + sum(v["errors"] for v in others.values())
        rows.append(f"| {w} | {f} | {seeds} | {s_txt} | {p_txt} | {r_s} | {r_p} | {ttft:.3f} | {hit:.3f} / "
                    f"{peer_hits} | {errors} | {load_range(folder, tag, w, f)} |")
    return rows


if __name__ == "__main__":
    print("| workload | fleet | adaptive (s, seeds 1, 2) | best static (s) | best peer (s) | ÷ best static | "
          "÷ best peer | adaptive TTFT (s) | prefix hit: adaptive / peers | errors | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(cell_rows(sys.argv[1], sys.argv[2])))
