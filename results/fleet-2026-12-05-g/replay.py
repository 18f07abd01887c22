# ruff: noqa  -- a quick analysis script, kept as it ran
"""Offline: replay a bench run through the learner on PYTHONPATH (every response observed when it finished), and at
each request's send read its predicted length and tokens per step as the router would. Prints the long requests'
reads and, per delivered-length bucket of the speculative responses, implied steps / steps taken.
usage: replay.py BENCH.json WORKLOAD.jsonl [ids...]"""
import json,sys,math,collections as C
from gateway.core.classify import classify, features, temperature_bucket
from gateway.core.learner import Learner, Observation
from gateway.core.protocol import request_view
from gateway.core.acceptance_cells import family_of
from gateway.settings import Settings
s=Settings(); cc=s.classifier_config(); lrn=Learner(s.learner_config())
wl={}
for l in open(sys.argv[2]):
    it=json.loads(l); wl[it['id']]=it
reqs=[r for r in json.load(open(sys.argv[1]))['policies']['adaptive']['requests'] if r.get('repeat',1)==1]
ev=[]
for r in reqs:
    ev.append((r['sent_s'],0,r)); ev.append((r['sent_s']+r['e2e_s'],1,r))
ev.sort(key=lambda e:(e[0],e[1]))
info={}
def feats(r):
    it=wl[r['id']]; v=request_view(it['endpoint'], it['body']); f=features(v,cc)
    return f, classify(f,cc), temperature_bucket(f.temperature), family_of(v.prefix_blocks)
agg=C.defaultdict(lambda:[0.0,0.0]); err=[]
for t,kind,r in ev:
    f,c,b,fam=feats(r)
    if kind==0:
        post=lrn.tokens_per_step_posterior(c,b)
        out,tps,sd=lrn.per_request.for_request(post,c,b,f.max_tokens,f.max_tokens_given,f.prompt_tokens,f.structured_output,fam,f.temperature,f.copy_source)
        blind=lrn.per_request.tokens_per_step(post,c,b,f.prompt_tokens,fam,f.temperature,f.copy_source)[0]
        info[r['id']]=(out,tps,blind,post[0],c,b,f.copy_source)
    else:
        if r['status']!='200': continue
        lrn.observe(Observation(role=r['backend'],task_class=c,bucket=b,prompt_tokens=f.prompt_tokens,completion_tokens=r['completion_tokens'],
            steps=r['engine_steps'],ttft_s=r['ttft_s'],e2e_s=r['e2e_s'],load_self=1.0,max_tokens=f.max_tokens if f.max_tokens_given else None,
            warmup=True,structured=f.structured_output,family=fam,temperature=f.temperature,copy_source=f.copy_source))
        if r['backend']=='speculative' and r['engine_steps']>1:
            out,tps,blind,*_=info[r['id']]
            k=2**round(math.log2(max(r['completion_tokens'],8)))
            a=agg[k]; a[0]+=(r['completion_tokens']-1)/tps; a[1]+=r['engine_steps']-1
            a=agg['all']; a[0]+=(r['completion_tokens']-1)/tps; a[1]+=r['engine_steps']-1
            err.append((abs(math.log(((r['completion_tokens']-1)/tps)/(r['engine_steps']-1))), r['engine_steps']-1))
for r in sorted(reqs,key=lambda r:r['sent_s']):
    if r['completion_tokens']>=500 or r['id'] in sys.argv[3:]:
        out,tps,blind,cls_,c,b,cp=info[r['id']]
        d=(r['completion_tokens']-1)/max(r['engine_steps']-1,1) if r['backend']=='speculative' else float('nan')
        print(f"{r['id'][-5:]} {c}/{b} copy={cp:d} out={r['completion_tokens']:5d} pO={out:6.1f} read={tps:5.2f} (no len {blind:5.2f}, class {cls_:5.2f}) {r['backend'][:4]} delivered={d:5.2f}")
print('steps-weighted mean |log implied/taken|', round(sum(e*w for e,w in err)/sum(w for _,w in err),3), 'per response', round(sum(e for e,_ in err)/len(err),3))
print('implied steps / steps taken, by delivered length:', {k:round(a[0]/a[1],3) for k,a in sorted(agg.items(),key=lambda kv:(str(type(kv[0])),kv[0]))})
