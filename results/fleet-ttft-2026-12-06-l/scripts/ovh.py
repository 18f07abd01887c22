# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, statistics as st
from glog import load
f, tag = sys.argv[1], sys.argv[2]
d = json.load(open(f))
for pol, v in d['policies'].items():
    for rp in (1, 2):
        cl = {r['id']: r for r in v['requests'] if r['repeat'] == rp}
        try: g = {r['id']: r for r in load(f.replace('.json', '-logs') + f'/gateway-{pol}-{rp}.log')}
        except FileNotFoundError: continue
        diff = [cl[i]['ttft_s'] - g[i]['ttft_s'] for i in g if i in cl]
        e2 = [cl[i]['e2e_s'] - g[i]['observed_s'] for i in g if i in cl]
        print(tag, pol, rp, 'client-gateway ttft: mean %.4f median %.4f p90 %.4f | e2e diff mean %.4f' % (st.mean(diff), st.median(diff), sorted(diff)[int(.9*len(diff))], st.mean(e2)))
