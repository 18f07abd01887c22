# ruff: noqa  -- a quick analysis script, kept as it ran
import collections, gzip, json, sys
"""win.py RUN/requests.jsonl.gz [more files]: mean e2e per 5-s window of arrival, adaptive against the statics on the same
requests, and the summed excess over each static (the tables of README.md)."""
def load(f):
    by = collections.defaultdict(dict)
    for l in (gzip.open(f, 'rt') if f.endswith('.gz') else open(f)):
        r = json.loads(l); by[r['policy']][r['id'].rsplit('-',1)[1]] = r
    return by
by = load(sys.argv[1])
if len(sys.argv) > 2:
    for f in sys.argv[2:]:
        for k, v in load(f).items(): by[k].update(v)
pols = [p for p in by if p.startswith('adaptive')] + [p for p in ('baseline','speculative') if p in by]
ref = by[pols[0]]
W = 5
rows = collections.defaultdict(lambda: collections.defaultdict(list))
for k, r in ref.items():
    w = int(r['sent_at_s'] // W)
    for p in pols:
        if k in by[p]: rows[w][p].append(by[p][k]['e2e_s'])
    rows[w]['spec'].append(r['backend'] == 'speculative')
print('win', 'n', 'to_spec', *pols, 'excess_vs_best_sum')
for w in sorted(rows):
    d = rows[w]; n = len(d[pols[0]])
    m = {p: sum(d[p]) / max(len(d[p]), 1) for p in pols}
    best = min(sum(d[p]) for p in pols[1:]) if len(pols) > 1 else 0
    print(f"{w*W:3d}-{w*W+W:3d} {n:4d} {sum(d['spec']):4d} " + ' '.join(f"{m[p]:.3f}" for p in pols) + f" {sum(d[pols[0]]) - sum(d['baseline']):+.1f} {sum(d[pols[0]]) - sum(d['speculative']):+.1f}")
