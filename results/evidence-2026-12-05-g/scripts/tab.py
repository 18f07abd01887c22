# ruff: noqa  -- a quick analysis script, kept as it ran
"""Analysis helper of results/idle-step-2026-12-05-f (see README)."""

import glob
import json
import os
import statistics
import sys


def m(t, k, pol):
    try:
        with open(f"/tmp/l37f/ev/{t}--{k}.json") as fh:
            d = json.load(fh)
    except Exception:
        return None
    r = d["policies"][pol]["runs"]
    return statistics.median(x["mean_e2e_s"] for x in r), statistics.median(x.get("speculative_share", 0) for x in r)


# usage: tab.py [--seed N] TAG...  (adaptive of seed N against the statics of seed 1: the gateway's seed does not
# change what a static policy sends where, and the emulator's acceptance is seeded per request)
args = sys.argv[1:]
seed = "1"
if args[:1] == ["--seed"]:
    seed, args = args[1], args[2:]
tags = args
keys = sorted({os.path.basename(p).split("--", 1)[1][:-5] for p in glob.glob("/tmp/l37f/ev/B--*.json")})
rat = {t: [] for t in tags}
for k in keys:
    b, s = m("B", k, "baseline"), m("S", k, "speculative")
    if not b or not s:
        continue
    row = [k.replace("h200-ngram--", ""), f"B {b[0]:.3f}", f"S {s[0]:.3f}"]
    for t in tags:
        a = m(t, k[: -len("s1")] + "s" + seed, "adaptive")
        if a:
            rat[t].append(a[0] / min(b[0], s[0]))
            row.append(f"{t} {a[0] / min(b[0], s[0]):.3f} ({a[1]:.0%})")
    print(*row)
for t, r in rat.items():
    if r:
        print(t, len(r), f"median {statistics.median(r):.3f} worst {max(r):.3f} >1.05 {sum(x > 1.05 for x in r)}")
