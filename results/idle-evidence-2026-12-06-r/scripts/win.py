# ruff: noqa  -- a quick analysis script, kept as it ran
"""win.py WORKLOAD RUN...: per 10-s arrival window, mean observed e2e of each run (RUN = a -logs dir), its share to the
n-gram server and its mean load at decision (load_self + co-runners)."""
import glob, json, sys, collections
wl = {json.loads(l)["id"]: json.loads(l)["t"] for l in open(sys.argv[1])}
B = 10
runs = sys.argv[2:]
rows = collections.defaultdict(dict)
for r in runs:
    log = glob.glob(r + "/gateway-*.log")[0]
    acc = collections.defaultdict(list)
    for l in open(log):
        if '"event":"request"' not in l: continue
        e = json.loads(l)
        acc[int(wl[e["id"]] // B)].append((e["observed_s"], e["backend"] == "speculative",
                                          e.get("load_self", 0) + sum(c[1] for c in e.get("co_runners", []))))
    for w, v in acc.items(): rows[w][r] = v
print("| window | n | " + " | ".join(r.split("/")[-1].split("--")[0] for r in runs) + " |")
for w in sorted(rows):
    cells = []
    for r in runs:
        v = rows[w].get(r, [])
        cells.append(f"{sum(x[0] for x in v)/len(v):.3f} ({sum(x[1] for x in v)}/{len(v)}, L{sum(x[2] for x in v)/len(v):.1f})" if v else "-")
    print(f"| {w*B}-{w*B+B} | {len(next(iter(rows[w].values())))} | " + " | ".join(cells) + " |")
