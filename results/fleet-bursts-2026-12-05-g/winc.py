# ruff: noqa  -- a quick analysis script, kept as it ran
# mean e2e per time window (bench json, all repeats), for several bench files
import json, sys, collections as C, statistics as st
W = float(sys.argv[1]); files = sys.argv[2:]
rows = {}
for f in files:
    d = json.load(open(f)); p = next(iter(d['policies'].values()))
    g = C.defaultdict(list)
    for r in p['requests']:
        if r.get('e2e_s') is not None: g[int(r['sent_s'] // W)].append(r['e2e_s'])
    rows[f] = g
keys = sorted(set(k for g in rows.values() for k in g))
print("window  n/rep  " + "  ".join(f.split('/')[-1][:16] for f in files))
for k in keys:
    print(f"{k*W:5.0f}  {len(rows[files[0]][k])/3:5.0f}  " + "  ".join(f"{st.mean(rows[f][k]):16.3f}" if rows[f][k] else " "*16 for f in files))
