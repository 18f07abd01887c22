# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, os, statistics as st
def hit(em):
    h = sum(v.get('prefix_cache_hits', 0) for v in em.values()); q = sum(v.get('prefix_cache_queries', 0) for v in em.values())
    return h / q if q else float('nan')
for f in sys.argv[1:]:
    d = json.load(open(f))
    print(os.path.basename(f))
    for pol, v in d['policies'].items():
        reqs = v['requests']
        reps = sorted({r['repeat'] for r in reqs})
        out = []
        for rp in reps:
            rr = [r for r in reqs if r['repeat'] == rp and r['status'] == '200']
            t = st.mean(r['ttft_s'] for r in rr); e = st.mean(r['e2e_s'] for r in rr)
            h = hit(v['emulator'][rp - 1]) if 'emulator' in v else float('nan')
            sp = sum(1 for r in rr if r['backend'] == 'speculative') / len(rr)
            out.append(f"s{rp}: ttft {t:.4f} e2e {e:.4f} hit {h:.3f} spec {sp:.2f}")
        print(f"  {pol:26s} " + " | ".join(out))
