"""The Mooncake table: per window and code version, specgate adaptive's prefix hit rate and mean TTFT (seeds 1, 2)
against vllm-router `cache_aware`'s hit rate and `least_loaded`'s TTFT (run once, by the base code).
Usage: python moon_table.py DIR"""

from __future__ import annotations

import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))
from summarize import load, load_range, runs


def main(folder: str) -> None:
    print("| window | fleet | code | adaptive hit (seeds) | vllm-router cache_aware hit | adaptive TTFT (s, seeds) | "
          "least_loaded TTFT (s) | TTFT ÷ least_loaded | adaptive e2e (s, seeds) | least_loaded / vllm ca e2e (s) "
          "| load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    order = {"base": 0, "after": 1, "withc": 2, "after2": 3, "ctl-base": 4, "ctl-after2": 5}
    paths = glob.glob(f"{folder}/*--mooncake-*--adaptive.json*")
    def key(p: str) -> tuple[str, int]:
        tag, w = os.path.basename(p).split("--")[:2]
        return w, order.get(tag, 9)

    for path in sorted(paths, key=key):
        tag, w, f = os.path.basename(path).split("--")[:3]
        others = glob.glob(f"{folder}/*--{w}--{f}--others.json*")
        ad = runs(load(path)["policies"]["adaptive"])
        o = {k: runs(v)[0] for k, v in load(others[0])["policies"].items()} if others else {}
        ll, ca = o.get("least_loaded"), o.get("vllm-router:cache_aware")
        ttft = statistics.median(r["ttft"] for r in ad)
        hits = ", ".join(f"{r['hit']:.3f}" for r in ad)
        ttfts = ", ".join(f"{r['ttft']:.3f}" for r in ad)
        e2es = ", ".join(f"{r['e2e']:.3f}" for r in ad)
        ca_hit = f"{ca['hit']:.3f}" if ca else "-"
        ll_ttft, ratio = (f"{ll['ttft']:.3f}", f"**{ttft / ll['ttft']:.3f}**") if ll else ("-", "-")
        others_e2e = f"{ll['e2e']:.3f} / {ca['e2e']:.3f}" if ll and ca else "-"
        print(f"| {w} | {f} | {tag} | {hits} | {ca_hit} | {ttfts} | {ll_ttft} | {ratio} | {e2es} | {others_e2e} "
              f"| {load_range(folder, tag, w, f)} |")

if __name__ == "__main__":
    main(sys.argv[1])
