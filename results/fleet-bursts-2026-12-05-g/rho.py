# ruff: noqa  -- a quick analysis script, kept as it ran
# offline: the inflow estimate at each send vs the observed stretch (obs / predicted) per request
import json, sys, datetime as D, statistics as st, collections as C
f = sys.argv[1]; W = float(sys.argv[2]); PF = 24.5e-6
rs = [json.loads(l) for l in open(f) if '"event":"request"' in l]
for r in rs:
    end = D.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp(); r['end'] = end; r['sent'] = end - r['observed_s']
g = C.defaultdict(list)
for r in rs:
    if r['engine_steps'] < 2: continue
    tok = sum(o['prompt_tokens'] for o in rs if o['backend'] == r['backend'] and r['sent'] - W <= o['sent'] < r['sent'] and o['end'] > r['sent'])
    rho = min(tok * PF / W, 0.8)
    fut = sum(o['prompt_tokens'] for o in rs if o['backend'] == r['backend'] and r['sent'] < o['sent'] < r['end'] - 0.005) * PF
    b = 0 if rho < 0.1 else 1 if rho < 0.3 else 2 if rho < 0.5 else 3 if rho < 0.7 else 4
    g[b].append((r['observed_s'], r['predicted_s'], rho, fut))
print("rho-bin n obs pred pred/(1-rho) pred*(1+rho) pred+fut  | med ratios obs/pred obs/(pred/(1-rho)) obs/(pred(1+rho))")
for b in sorted(g):
    x = g[b]
    m = lambda i: st.mean(v[i] for v in x)
    print(['<.1','.1-.3','.3-.5','.5-.7','.7+'][b], len(x), f"{m(0):.3f} {m(1):.3f} {st.mean(v[1]/(1-v[2]) for v in x):.3f} {st.mean(v[1]*(1+v[2]) for v in x):.3f} {st.mean(v[1]+v[3] for v in x):.3f} | {st.median(v[0]/v[1] for v in x):.2f} {st.median(v[0]*(1-v[2])/v[1] for v in x):.2f} {st.median(v[0]/v[1]/(1+v[2]) for v in x):.2f}")
