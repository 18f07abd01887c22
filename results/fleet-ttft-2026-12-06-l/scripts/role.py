# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, statistics as st
for f in sys.argv[1:]:
    d = json.load(open(f)); rq = d['policies']['adaptive']['requests']
    for rp in (1, 2, 3):
        rr = [r for r in rq if r['repeat'] == rp]
        if not rr: continue
        out = []
        for role in ('baseline', 'speculative'):
            ss = [r for r in rr if r['backend'] == role]
            out.append(f"{role[:4]} n {len(ss)} ttft sum {sum(r['ttft_s'] for r in ss):.1f} e2e sum {sum(r['e2e_s'] for r in ss):.1f} decode sum {sum(r['e2e_s']-r['ttft_s'] for r in ss):.1f}")
        print(f.split('/')[-1], rp, ' | '.join(out))
