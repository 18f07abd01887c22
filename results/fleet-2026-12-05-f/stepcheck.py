# ruff: noqa  -- a quick analysis script, kept as it ran
import collections as C
import json
import statistics as st
import sys

logf, benchf, rep = sys.argv[1], sys.argv[2], int(sys.argv[3])
rs=[json.loads(l) for l in open(logf) if '"event":"request"' in l]
bench=list(json.load(open(benchf))['policies'].values())[0]['requests']
sent={r['id']:r['sent_s'] for r in bench if r.get('repeat',0) in (rep,0)}
rs=[r for r in rs if r['id'] in sent and r.get('status')=='200']
for r in rs: r['t']=sent[r['id']]
PF=27.5e-6; RIDE=5.0e-3
rows=C.defaultdict(list)
for r in rs:
    if r['engine_steps']<3: continue
    a, b = r['t']+(r['ttft_s'] if len(sys.argv)<5 else 0), r['t']+r['observed_s']
    others=[o for o in rs if o['instance']==r['instance'] and a < o['t'] < b]
    tok=sum(o['prompt_tokens'] for o in others)
    dec=r['observed_s']-r['ttft_s']
    pre=max(PF*tok - RIDE*len(others),0)
    raw=dec/(r['engine_steps']-1)
    c50=(dec-min(pre,0.5*dec))/(r['engine_steps']-1)
    c90=(dec-min(pre,0.9*dec))/(r['engine_steps']-1)
    L=r['load_self']; b_= 'L<2' if L<2 else 'L<4' if L<4 else 'L<8' if L<8 else 'L>=8'
    rows[(r['backend'],b_)].append((raw,c50,c90,pre/dec if dec>0 else 0))
for k in sorted(rows):
    v=rows[k]
    print(k, len(v), 'raw %.2f ms cap0.5 %.2f cap0.9 %.2f  median share of decode that was others prefill %.2f' % tuple([1000*st.median(x[i] for x in v) for i in range(3)]+[st.median(x[3] for x in v)]))
