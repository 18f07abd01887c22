# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, statistics as st
from glog import load
P = 2.4e-5
bins = [0, 2000, 5000, 10000, 20000, 40000, 10**9]
for path in sys.argv[1:]:
    rs = load(path)
    print(path)
    for lo, hi in zip(bins, bins[1:]):
        for role in ('baseline', 'speculative'):
            ss = [r for r in rs if lo <= r['prompt_tokens'] < hi and r['backend'] == role]
            if not ss: continue
            own = [P * (r['prompt_tokens'] - r.get('cached_tokens', 0)) for r in ss]
            w = [r['ttft_s'] - o for r, o in zip(ss, own)]
            print(f"  {lo:6d}-{hi:<10d} {role[:4]} n {len(ss):3d} ttft {st.mean(r['ttft_s'] for r in ss):.3f} own {st.mean(own):.3f} wait {st.mean(w):.3f} sum wait {sum(w):6.1f} pred {st.mean(r.get('predicted_ttft_s') or 0 for r in ss):.3f}")
    own = [P * (r['prompt_tokens'] - r.get('cached_tokens', 0)) for r in rs]
    print('  total wait', round(sum(r['ttft_s'] for r in rs) - sum(own), 1), 'own', round(sum(own), 1))
