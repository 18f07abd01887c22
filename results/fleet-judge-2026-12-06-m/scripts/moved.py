# ruff: noqa  -- a quick analysis script, kept as it ran
"""Requests routed to another role in run B than in run A: count and e2e sums, by direction and arrival third."""
import json, sys, collections
def load(p):
    v = list(json.load(open(p))["policies"].values())[0]
    return {r["id"]: r for r in v["requests"] if r.get("e2e_s") is not None}
a, b = load(sys.argv[1]), load(sys.argv[2])
ids = sorted(a); n = len(ids)
g = collections.defaultdict(lambda: [0, 0.0, 0.0])
for k, i in enumerate(ids):
    if i not in b: continue
    key = (a[i]["backend"][:4] + "->" + b[i]["backend"][:4], k * 3 // n)
    x = g[key]; x[0] += 1; x[1] += a[i]["e2e_s"]; x[2] += b[i]["e2e_s"]
for k in sorted(g):
    n_, ea, eb = g[k]
    print(f"{k[0]:12s} third {k[1]} n {n_:4d} e2e A {ea:7.1f} B {eb:7.1f} diff {eb-ea:+6.1f}")
