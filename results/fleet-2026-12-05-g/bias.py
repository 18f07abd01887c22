# ruff: noqa  -- a quick analysis script, kept as it ran
import json,sys,statistics as st
for f in sys.argv[1:]:
    R=[]
    for line in open(f):
        if '"event":"request"' not in line: continue
        r=json.loads(line)
        if r.get('status')!='200' or r.get('predicted_s') is None or not r.get('engine_steps'): continue
        R.append(r)
    for role in ('baseline','speculative'):
        rr=[r for r in R if r['backend']==role]
        q=lambda xs: [round(st.quantiles(xs,n=4)[i],3) for i in range(3)]
        ttft=[r['predicted_ttft_s']/max(r['ttft_s'],1e-4) for r in rr]
        steps=[]
        for r in rr:
            T=(r.get('predicted_tokens_per_step') or 1.0) if role=='speculative' else 1.0
            ns=max(r['predicted_output_tokens']-1,0)/max(T,1)
            if ns>0 and r['engine_steps']>2:
                steps.append(((r['predicted_s']-r['predicted_ttft_s'])/ns)/((r['observed_s']-r['ttft_s'])/(r['engine_steps']-1)))
        O=[r['predicted_output_tokens']/r['completion_tokens'] for r in rr]
        e2e=[r['predicted_s']/r['observed_s'] for r in rr]
        print(f.split('/')[-2][:40], role, len(rr), 'pred/obs quartiles: ttft', q(ttft), 'step', q(steps), 'len', q(O), 'e2e', q(e2e))
