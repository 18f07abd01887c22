# ruff: noqa  -- a quick analysis script, kept as it ran
# how many requests did a request's prefill actually stall, against the load it was priced with
import json, sys, datetime as D, statistics as st, collections as C
f = sys.argv[1]; PF = 2.9e-5
rs = [json.loads(l) for l in open(f) if '"event":"request"' in l]
for r in rs:
    end = D.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp(); r['end'] = end; r['sent'] = end - r['observed_s']; r['first'] = r['sent'] + r['ttft_s']
g = C.defaultdict(list)
for r in rs:
    if r['prompt_tokens'] < 500: continue
    t1 = r['first']; t0 = t1 - r['prompt_tokens'] * PF
    stalled = sum(1 for o in rs if o is not r and o['instance'] == r['instance'] and o['first'] < t0 + 0.003 and o['end'] > t1 - 0.003)
    present = sum(1 for o in rs if o is not r and o['instance'] == r['instance'] and o['sent'] <= r['sent'] < o['end'])
    L = r['load_self']; b = 0 if L < 1 else 1 if L < 3 else 2 if L < 6 else 3 if L < 10 else 4 if L < 16 else 5
    g[(r['backend'][:4], b)].append((L, present, stalled))
for k in sorted(g):
    x = g[k]
    print(k[0], ['<1','1-3','3-6','6-10','10-16','16+'][k[1]], len(x), "load", round(st.mean(v[0] for v in x), 2), "present", round(st.mean(v[1] for v in x), 2), "stalled", round(st.mean(v[2] for v in x), 2))
