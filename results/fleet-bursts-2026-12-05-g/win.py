# ruff: noqa  -- a quick analysis script, kept as it ran
# per 2-s window and backend: requests, prompt tokens, mean e2e, mean ttft, mean completion tokens
import json, sys, datetime as D, statistics as st, collections as C
f = sys.argv[1]; lo, hi = float(sys.argv[2]), float(sys.argv[3])
rs = [json.loads(l) for l in open(f) if '"event":"request"' in l]
for r in rs:
    end = D.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp(); r['sent'] = end - r['observed_s']
t0 = min(r['sent'] for r in rs)
g = C.defaultdict(list)
for r in rs:
    t = r['sent'] - t0
    if lo <= t < hi: g[(int(t // 2) * 2, r['backend'][:4])].append(r)
allw = [r for k in g for r in g[k]]
print(f"all {len(allw)} mean e2e {st.mean(r['observed_s'] for r in allw):.3f}")
for k in sorted(g):
    x = g[k]
    print(k, len(x), sum(r['prompt_tokens'] for r in x), f"e2e {st.mean(r['observed_s'] for r in x):.3f} ttft {st.mean(r['ttft_s'] for r in x):.3f} out {st.mean(r['completion_tokens'] for r in x):.0f} steps {st.mean(r['engine_steps'] for r in x):.0f}")
