# ruff: noqa  -- a quick analysis script, kept as it ran
"""The median prediction error with the logged prediction's own step/ttft/tps, and the output length replaced by one
constant per max_tokens (the best such constants, chosen on this very log: a floor for any length predictor that
knows only max_tokens)."""
import json,sys,statistics as st,collections as C
wl={}
for W in ['all-structured-code-a','azure-code-b','azure-code-a','azure-conv-b']:
    for l in open(f'/work/wt/w38c/runs/{W}.jsonl'):
        r=json.loads(l); wl[r['id']]=r['body']['max_tokens']
for f in sys.argv[1:]:
    R=[]
    for line in open(f):
        if '"event":"request"' not in line: continue
        r=json.loads(line)
        if r.get('status')!='200' or r.get('predicted_s') is None or not r.get('engine_steps'): continue
        T=(r.get('predicted_tokens_per_step') or 1.0) if r['backend']=='speculative' else 1.0
        O=r['predicted_output_tokens']; ns=max(O-1,0)/max(T,1)
        step=(r['predicted_s']-r['predicted_ttft_s'])/ns if ns>0 else 0.005
        R.append((wl[r['id']], r['predicted_ttft_s'], T, step, r['observed_s'], O, r['completion_tokens']))
    def med(fn): return st.median(abs(fn(x)-x[4])/x[4] for x in R)
    base=med(lambda x: x[1]+max(x[5]-1,0)/x[2]*x[3])
    # coordinate search per max_tokens
    best={}
    for m in sorted({x[0] for x in R}):
        cands=[2**(k/4) for k in range(0,48)]
        def tot(c): return med(lambda x: x[1]+max((c if x[0]==m else best.get(x[0], x[5]))-1,0)/x[2]*x[3])
        best[m]=min((c for c in cands if c<=m), key=tot)
    fl=med(lambda x: x[1]+max(best[x[0]]-1,0)/x[2]*x[3])
    lo=C.defaultdict(list)
    for x in R: lo[x[0]].append(x[5])
    print(f.split('/')[-2][:44], 'as logged', round(base,3), 'best constant per max_tokens', round(fl,3), {m:(round(c,1), round(st.median(lo[m]),1)) for m,c in best.items()})
