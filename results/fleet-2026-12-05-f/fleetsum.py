# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per policy in a bench result: mean e2e per run, prefix hit rate, requests/steps/tokens per server."""
import gzip
import json
import sys

for f in sys.argv[1:]:
    d = json.load(gzip.open(f) if f.endswith('.gz') else open(f))
    for n, p in d['policies'].items():
        for i, em in enumerate(p['emulator']):
            h = sum(s.get('prefix_cache_hits', 0) for s in em.values()); q = sum(s.get('prefix_cache_queries', 0) for s in em.values())
            srv = " ".join(f"{k[:4]}{k[-1]}:{s['requests']}r/{s['generation_tokens']/max(s['steps'],1):.2f}t/{s.get('prefix_cache_hits',0)/max(s.get('prefix_cache_queries',1),1):.3f}h" for k, s in sorted(em.items()))
            mean = p['runs'][i]['mean_e2e_s'] if 'runs' in p else None
            print(f"{f.split('/')[-1][:40]:40s} {n:28s} run{i+1} mean {mean} hit {h/max(q,1):.3f} | {srv}")
