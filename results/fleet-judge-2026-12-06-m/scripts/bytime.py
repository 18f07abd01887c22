# ruff: noqa  -- a quick analysis script, kept as it ran
"""Sum e2e by request-id quartile (arrival order), for several bench runs of one window."""
import json, sys, gzip
def load(p):
    op = gzip.open if p.endswith(".gz") else open
    j = json.load(op(p)); v = list(j["policies"].values())[0]
    return {r["id"]: r for r in v["requests"] if r.get("e2e_s") is not None}
runs = [(p.split("/")[-1][:40], load(p)) for p in sys.argv[1:]]
ids = sorted(runs[0][1])
n = len(ids); cuts = [0, 20, 40, n // 4, n // 2, 3 * n // 4, n]
cuts = sorted(set(cuts))
for name, d in runs:
    parts = []
    for a, b in zip(cuts, cuts[1:]):
        s = sum(d[i]["e2e_s"] for i in ids[a:b] if i in d); t = sum(d[i]["ttft_s"] or 0 for i in ids[a:b] if i in d)
        parts.append(f"[{a}:{b}] {s:6.1f} ({t:5.1f})")
    print(f"{name:40s} " + " ".join(parts))
