# ruff: noqa  -- a quick analysis script, kept as it ran
import collections as C
import json
import sys

lo, hi = float(sys.argv[1]), float(sys.argv[2])
def load(f,pol):
    d=json.load(open(f)); return d['policies'][pol]['requests']
args = sys.argv[3:]
for a in args:
    f, pol = a.split(':', 1)
    rs = load(f, pol)
    g=C.defaultdict(list)
    for r in rs:
        if r.get('e2e_s') is None or not (lo<=r['sent_s']<hi): continue
        g[(r.get('kind'),r['backend'])].append(r['e2e_s'])
    reps=len({r.get('repeat') for r in rs})
    tot = sum(sum(v) for v in g.values()) / sum(len(v) for v in g.values())
    print(f"{f.split('/')[-1][:12]} {pol[:10]} {tot:.3f}", ' '.join(f"{k[0][:9]}/{k[1][:4]}:{len(v)/reps:.0f}:{sum(v)/len(v):.2f}" for k,v in sorted(g.items())))
