# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per (class, bucket): requests, share to speculative and mean e2e, per policy (and per run averaged), from bench results.
usage: byclass.py FILE[:POLICY] ..."""
import collections as C
import gzip
import json
import sys

cols = []
for arg in sys.argv[1:]:
    f, _, pol = arg.partition(':')
    d = json.load(gzip.open(f) if f.endswith('.gz') else open(f))
    for n, p in d['policies'].items():
        if pol and n != pol: continue
        g = C.defaultdict(list)
        for r in p['requests']:
            if r.get('e2e_s') is None: continue
            g[f"{r['class']}/{r['bucket']}"].append(r)
        cols.append((n[:18], g, len(p['requests'])))
keys = sorted({k for _, g, _ in cols for k in g}, key=lambda k: -sum(len(g.get(k, [])) for _, g, _ in cols))
print(f"{'key':22s}" + "".join(f"{n:>26s}" for n, _, _ in cols))
for k in keys:
    row = f"{k:22s}"
    for n, g, tot in cols:
        rs = g.get(k, [])
        if not rs: row += f"{'':>26s}"; continue
        m = sum(r['e2e_s'] for r in rs) / len(rs); sp = sum(r['backend'] == 'speculative' for r in rs) / len(rs)
        row += f"{len(rs):>6d} sp{sp:4.2f} {m:6.3f} Σ{sum(r['e2e_s'] for r in rs)/tot:6.3f}"
    print(row)
print(f"{'total':22s}" + "".join(f"{sum(r['e2e_s'] for rs in g.values() for r in rs)/tot:>26.4f}" for _, g, tot in cols))
