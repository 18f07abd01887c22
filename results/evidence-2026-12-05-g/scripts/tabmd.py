# ruff: noqa  -- a quick analysis script, kept as it ran
"""Markdown table of results/evidence-2026-12-05-g: adaptive ÷ the better static per cell and seed."""
import glob
import json
import os
import statistics

EV = "/tmp/l37f/ev"


def mean(tag, key, pol):
    p = f"{EV}/{tag}--{key}.json"
    if not os.path.exists(p):
        return None
    with open(p) as fh:
        r = json.load(fh)["policies"][pol]["runs"]
    return statistics.median(x["mean_e2e_s"] for x in r), statistics.median(x.get("speculative_share", 0) for x in r)


def cell(tag, key, best):
    a = mean(tag, key, "adaptive")
    return "" if a is None else f"{a[0] / best:.3f}"


keys = sorted({os.path.basename(p)[3:-5] for p in glob.glob(f"{EV}/B--*--s1.json")})
print("| workload | profile, time scale | baseline (s) | speculative (s) | main s1 | main s2 | `g2` s1 | s2 | s3 | **`g3`** s1 | s2 | to spec. (g3 s1) |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
runs = {"main": [], "g2": [], "g3": []}
for k in keys:
    b, s = mean("B", k, "baseline"), mean("S", k, "speculative")
    if not b or not s:
        continue
    best = min(b[0], s[0])
    prof, wl, scale, _ = k.split("--")
    m = [cell("v8sh", k, best) or cell("fin", k, best) or cell("g0", k, best),
         cell("fin", k[:-2] + "s2", best) or cell("g0", k[:-2] + "s2", best)]
    g2 = [cell("g2", k[:-2] + f"s{n}", best) for n in (1, 2, 3)]
    g3 = [cell("g3", k[:-2] + f"s{n}", best) for n in (1, 2)]
    if not (g2[0] or g3[0]):
        continue
    for name, xs in (("main", m), ("g2", g2), ("g3", g3)):
        runs[name] += [float(x) for x in xs if x]
    a = mean("g3", k, "adaptive") or mean("g2", k, "adaptive")
    row = [wl, f"{prof}, {scale[1:]}", f"{b[0]:.3f}", f"{s[0]:.3f}", *m, *g2, *(f"**{x}**" if x else "" for x in g3), f"{a[1]:.0%}"]
    print("| " + " | ".join(row) + " |")
print()
for name, r in runs.items():
    if r:
        print(f"- {name}: {len(r)} runs, median {statistics.median(r):.3f}, worst {max(r):.3f}, above 1.05: "
              f"{sum(x > 1.05 for x in r)}, above 1.01: {sum(x > 1.01 for x in r)}")
