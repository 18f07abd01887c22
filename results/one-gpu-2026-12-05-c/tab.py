# ruff: noqa  (a one-off analysis script of this results folder, not product code)
"""Table: adaptive ÷ better static per (profile, member, scale) for each tag, statics from stat-- runs."""

import glob
import json
import os
import statistics as st
import sys

tags = sys.argv[1].split(",")
pat = sys.argv[2] if len(sys.argv) > 2 else "*"


def mean(f, pol):
    d = json.load(open(f))["policies"][pol]["requests"]
    return {r["id"]: r["e2e_s"] for r in d if r.get("repeat", 0) == 0}


rows = []
for sf in sorted(glob.glob(f"runs/stat--{pat}.json")):
    key = os.path.basename(sf)[len("stat--") :]
    b, s = mean(sf, "baseline"), mean(sf, "speculative")
    better = min(sum(b.values()), sum(s.values()))
    n = len(b)
    out = [key.replace(".json", ""), f"B {sum(b.values()) / n:.3f} S {sum(s.values()) / n:.3f}"]
    vals = {}
    for t in tags:
        f = f"runs/{t}--{key}"
        if os.path.exists(f):
            a = mean(f, "adaptive")
            vals[t] = sum(a[i] for i in b) / better
            d = json.load(open(f))["policies"]["adaptive"]["summary"]["routed"]
            out.append(f"{t} {vals[t]:.3f} ({d.get('speculative', 0) * 100 // max(1, sum(d.values()))}%)")
        else:
            out.append(f"{t} -")
    rows.append((out, vals))
    print("  ".join(out))
for t in tags:
    v = [vals[t] for _, vals in rows if t in vals]
    if v:
        print(
            f"{t}: n={len(v)} median {st.median(v):.3f} worst {max(v):.3f} >1.05: {sum(x > 1.05 for x in v)} >1.01: {sum(x > 1.01 for x in v)}"
        )
