# ruff: noqa  -- a quick analysis script, kept as it ran
# per run: mean TTFT, mean e2e (the bench client's records), prefix hit rate, share to speculative
# usage: final_table.py RUNS_DIR TAG... (files TAG.json or TAG.json.gz)
import gzip, json, os, statistics as st, sys
d0 = sys.argv[1]
def opened(tag):
    for ext in ('.json', '.json.gz'):
        p = os.path.join(d0, tag + ext)
        if os.path.exists(p):
            return json.load(gzip.open(p) if ext.endswith('gz') else open(p))
def hit(em):
    h = sum(v.get('prefix_cache_hits', 0) for v in em.values()); q = sum(v.get('prefix_cache_queries', 0) for v in em.values())
    return h / q if q else float('nan')
print('| run | policy | seed | mean TTFT s | mean e2e s | prefix hit | to spec | errors |')
print('|---|---|---|---|---|---|---|---|')
for tag in sys.argv[2:]:
    d = opened(tag)
    if d is None: continue
    seed0 = int(d['command'].split('--seed ')[1].split()[0]) if '--seed ' in d['command'] else 1
    for pol, v in d['policies'].items():
        reqs = v['requests']
        for rp in sorted({r.get('repeat', 1) for r in reqs}):
            rr = [r for r in reqs if r.get('repeat', 1) == rp]
            ok = [r for r in rr if r['status'] == '200']
            em = v['emulator'][rp - 1] if 'emulator' in v else {}
            print(f"| {tag} | {pol} | {seed0 + rp - 1} | {st.mean(r['ttft_s'] for r in ok):.4f} | {st.mean(r['e2e_s'] for r in ok):.4f} | {hit(em):.3f} | {sum(r['backend']=='speculative' for r in ok)/len(ok):.2f} | {len(rr)-len(ok)} |")
