# ruff: noqa  -- a quick analysis script, kept as it ran
# per request: observed decode vs predicted decode, and the prefill others put in the decode window
import json, sys, datetime as D, statistics as st, collections as C
f = sys.argv[1]; PF = float(sys.argv[2]) if len(sys.argv) > 2 else 24.5e-6
rs = [json.loads(l) for l in open(f) if '"event":"request"' in l]
rs = [r for r in rs if r.get("status") == "200"]
for r in rs:
    end = D.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp()
    r['end'] = end; r['sent'] = end - r['observed_s']; r['first'] = r['sent'] + r['ttft_s']
t0 = min(r['sent'] for r in rs)
g = C.defaultdict(list)
for r in rs:
    if r['engine_steps'] < 3: continue
    others = [o for o in rs if o is not r and o['instance'] == r['instance']]
    # prompts of others whose prefill may land in our decode: sent in (our first - their ttft) .. our end; approx: sent in [our sent, our end)
    inside = sum(o['prompt_tokens'] for o in others if r['sent'] < o['sent'] < r['end'] - 0.005)
    dec_o = r['observed_s'] - r['ttft_s']; dec_p = r['predicted_s'] - r['predicted_ttft_s']
    L = r['load_self']; b = 0 if L < 1 else 1 if L < 3 else 2 if L < 6 else 3 if L < 10 else 4
    g[(r['backend'][:4], b)].append((dec_o, dec_p, inside * PF, r['engine_steps']))
print("role load n  dec_obs dec_pred  others_prefill_in_window  dec_pred+pf  med(obs/(pred+pf))")
for k in sorted(g):
    x = g[k]
    print(k[0], ['<1','1-3','3-6','6-10','10+'][k[1]], len(x), *(f"{st.mean(v[i] for v in x):.3f}" for i in range(3)),
          f"{st.mean(v[1]+v[2] for v in x):.3f}", f"{st.median(v[0]/(v[1]+v[2]) for v in x):.2f}")
