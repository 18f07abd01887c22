# ruff: noqa  -- a quick analysis script, kept as it ran
"""Which term of the prediction errs: the median |pred-obs|/obs with each term replaced by what was observed.
usage: terms.py LOG..."""
import json,sys,statistics as st
def rows(f):
    for line in open(f):
        if '"event":"request"' not in line: continue
        r=json.loads(line)
        if r.get('status')!='200' or r.get('predicted_s') is None or not r.get('engine_steps'): continue
        yield r
for f in sys.argv[1:]:
    R=list(rows(f)); out={}
    def err(fn, sub=None):
        xs=[abs(fn(r)-r['observed_s'])/r['observed_s'] for r in R if sub is None or sub(r)]
        return st.median(xs) if xs else float('nan'), len(xs)
    def parts(r):
        T=(r.get('predicted_tokens_per_step') or 1.0) if r['backend']=='speculative' else 1.0
        O=r['predicted_output_tokens']; ns=max(O-1,0)/max(T,1)
        step=(r['predicted_s']-r['predicted_ttft_s'])/ns if ns>0 else 0.0
        To=(r['completion_tokens']-1)/max(r['engine_steps']-1,1) if r['backend']=='speculative' else 1.0
        step_o=(r['observed_s']-r['ttft_s'])/(r['engine_steps']-1) if r['engine_steps']>1 else step
        return dict(T=T,O=O,step=step,ttft=r['predicted_ttft_s'],To=max(To,1.0),Oo=r['completion_tokens'],step_o=step_o,ttft_o=r['ttft_s'])
    def pred(r, **over):
        p=parts(r); p.update({k:p[v] for k,v in over.items()})
        return p['ttft']+max(p['O']-1,0)/max(p['T'],1)*p['step']
    for sub_name, sub in (('all',None),('base',lambda r:r['backend']=='baseline'),('spec',lambda r:r['backend']=='speculative')):
        line=[]
        for name,over in (('as logged',{}),('true len',{'O':'Oo'}),('true tps',{'T':'To'}),('true len+tps',{'O':'Oo','T':'To'}),
                          ('true step',{'step':'step_o'}),('true ttft',{'ttft':'ttft_o'}),('len+tps+ttft',{'O':'Oo','T':'To','ttft':'ttft_o'}),('len+tps+step',{'O':'Oo','T':'To','step':'step_o'})):
            e,n=err(lambda r,o=over: pred(r,**o), sub)
            line.append(f'{name}={e:.3f}')
        print(f.split('/')[-2][:40], sub_name, n, ' '.join(line))
