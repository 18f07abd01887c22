# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys
def load(p, pol):
    d = json.load(open(p)); return {r['id']: r for r in d['policies'][pol]['requests']}
B = load(sys.argv[1], 'baseline'); S = load(sys.argv[2], 'speculative'); A = load(sys.argv[3], 'adaptive')
w = float(sys.argv[4]) if len(sys.argv) > 4 else 10
import collections
g = collections.defaultdict(list)
for k, r in B.items():
    if k in A and k in S: g[int(r['sent_s'] // w)].append(k)
tb = ts = ta = 0
for i in sorted(g):
    ks = g[i]; b = sum(B[k]['e2e_s'] for k in ks); s = sum(S[k]['e2e_s'] for k in ks); a = sum(A[k]['e2e_s'] for k in ks)
    tb += b; ts += s; ta += a
    kinds = collections.Counter(B[k]['kind'][:4] for k in ks)
    print(f"{i*w:4.0f}s n {len(ks):3d} infl {sum(S[k]['inflight_at_send'] for k in ks)/len(ks):4.1f} B {b/len(ks):.3f} S/B {s/b:.3f} A/B {a/b:.3f} A/min {a/min(b,s):.3f} spec {sum(A[k]['backend']=='speculative' for k in ks):3d} cum A/min {ta/min(tb,ts):.3f}", dict(kinds))
