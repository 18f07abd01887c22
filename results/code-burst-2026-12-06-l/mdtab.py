# ruff: noqa  -- a quick analysis script, kept as it ran
"""Markdown table of adaptive ÷ the better static per run: `mdtab.py TAG_OLD TAG_NEW` over /tmp/l37f/ev (statics B, S
of seed 1; adaptive of every seed present)."""
import glob
import json
import os
import statistics
import sys

EV = "/tmp/l37f/ev"


def mean(path, pol):
    try:
        with open(path) as fh:
            return json.load(fh)["policies"][pol]["runs"][0]
    except (OSError, KeyError):
        return None


old, new = sys.argv[1], sys.argv[2]
rows, ro, rn = [], [], []
for path in sorted(glob.glob(f"{EV}/{new}--*.json")):
    key = os.path.basename(path)[len(new) + 2:-5]
    base_key = key.rsplit("--s", 1)[0] + "--s1"
    b, s = mean(f"{EV}/B--{base_key}.json", "baseline"), mean(f"{EV}/S--{base_key}.json", "speculative")
    if not b or not s:
        continue
    best = min(b["mean_e2e_s"], s["mean_e2e_s"])
    n = mean(path, "adaptive")
    o = mean(f"{EV}/{old}--{key}.json", "adaptive")
    rn.append(n["mean_e2e_s"] / best)
    orat = "-" if o is None else f"{o['mean_e2e_s'] / best:.3f}"
    if o is not None:
        ro.append(o["mean_e2e_s"] / best)
    prof, wl, scale, seed = key.split("--")
    rows.append(f"| {prof} | {wl} | {scale[1:]} | {seed[1:]} | {b['mean_e2e_s']:.3f} | {s['mean_e2e_s']:.3f} | {orat} | "
                f"{n['mean_e2e_s'] / best:.3f} | {100 * n.get('speculative_share', 0):.0f}% |")
print(f"| profile | workload | scale | seed | baseline s | speculative s | {old} ÷ better | {new} ÷ better | {new} spec share |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
for name, r in ((old, ro), (new, rn)):
    if r:
        print(f"\n{name}: {len(r)} runs, median {statistics.median(r):.3f}, worst {max(r):.3f}, above 1.05: {sum(x > 1.05 for x in r)}")
