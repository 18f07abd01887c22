# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per max_tokens cap: median error, error with the length known, observed / predicted output length.

usage: by_cap.py GATEWAY_LOG WINDOW.jsonl"""
import json, sys, statistics as st, collections
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decompose import analyse
log, wl = sys.argv[1], sys.argv[2]
items = {json.loads(l)['id']: json.loads(l) for l in open(wl)}
_, rows = analyse(log)
by = collections.defaultdict(list)
for r in rows:
    it = items[r['d']['id']]
    cap = it['body'].get('max_tokens')
    by[(cap)].append(r)
for cap in sorted(by):
    rs = by[cap]
    err = [abs(r['ps'] - r['os']) / r['os'] for r in rs]
    orc = [abs(r['pt'] + (max(r['oo'] - 1, 0) / r['ptps'] * r['pstep'] if r['pstep'] else r['pdec']) - r['os']) / r['os'] for r in rs]
    print(cap, len(rs), 'err', round(st.median(err), 3), 'oracle_len', round(st.median(orc), 3),
          'out obs median', st.median(r['oo'] for r in rs), 'pred med', round(st.median(r['po'] for r in rs), 1),
          'pred/obs', round(st.median(r['po'] / r['oo'] for r in rs), 2),
          'obs q10/q90', sorted(r['oo'] for r in rs)[len(rs)//10], sorted(r['oo'] for r in rs)[9*len(rs)//10],
          'ttft share', round(st.median(r['ot'] / r['os'] for r in rs), 2))
