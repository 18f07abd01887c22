# ruff: noqa  -- a quick analysis script, kept as it ran
# mean TTFT and e2e by prompt-size bin (gateway tokens), summed over the given runs' logs
import sys, statistics as st
from glog import load
bins = [0, 5000, 20000, 10**9]
groups = {}
for arg in sys.argv[1:]:
    tag, paths = arg.split('=')
    rs = [r for p in paths.split(',') for r in load(p)]
    for lo, hi in zip(bins, bins[1:]):
        ss = [r for r in rs if lo <= r['prompt_tokens'] < hi]
        groups.setdefault((lo, hi), []).append((tag, len(ss), sum(r['ttft_s'] for r in ss), sum(r['observed_s'] - r['ttft_s'] for r in ss), sum(r['backend'] == 'speculative' for r in ss)))
for k, v in groups.items():
    print(k, ' | '.join(f"{t}: n {n} ttft sum {a:.1f} decode sum {b:.1f} spec {s}" for t, n, a, b, s in v))
