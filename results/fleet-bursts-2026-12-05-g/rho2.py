# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, datetime as D, statistics as st
f = sys.argv[1]; W = float(sys.argv[2]); PF = float(sys.argv[3]) if len(sys.argv) > 3 else 2.9e-5
rs = [json.loads(l) for l in open(f) if '"event":"request"' in l]
for r in rs:
    end = D.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp(); r['end'] = end; r['sent'] = end - r['observed_s']
e0, e1, e2 = [], [], []
for r in rs:
    tok = sum(o['prompt_tokens'] for o in rs if o['instance'] == r['instance'] and r['sent'] - W <= o['sent'] < r['sent'] and o['end'] > r['sent'])
    rho = min(tok * PF / W, 1.0) if r['predicted_output_tokens'] > 1 else 0
    o = r['observed_s']; p = r['predicted_s']
    e0.append(abs(p - o) / o); e1.append(abs(p * (1 + rho) - o) / o); e2.append(abs(p * (1 + rho/2) - o) / o)
print(f, "median err: as logged", round(st.median(e0), 3), "(1+rho)", round(st.median(e1), 3), "(1+rho/2)", round(st.median(e2), 3))
