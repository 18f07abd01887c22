# ruff: noqa  -- a quick analysis script, kept as it ran
import json,sys
wl={json.loads(l)['id']:json.loads(l) for l in open('/work/wt/w38c/runs/all-structured-code-a.jsonl')}
runs={}
for spec in sys.argv[1:]:
    f,_,pol=spec.partition(':')
    d=json.load(open(f))
    for k,x in d['policies'].items():
        if pol and k!=pol: continue
        runs[f.split('/')[-1].replace('all-structured-code-a--1+1','').replace('.json','')[-10:]+':'+k[:10]]={r['id']:r for r in x['requests']}
names=list(runs)
ids=sorted(runs[names[0]], key=lambda i: wl[i]['t'])
ids=[i for i in ids if wl[i]['trace']['output_tokens']>=150]
print('id                 t      out  prompt mt  '+' '.join(n.rjust(16) for n in names))
for i in ids:
    w=wl[i]
    print(f"{i[-8:]:8s} {w['t']:6.1f} {w['trace']['output_tokens']:5d} {w['trace']['prompt_tokens']:6d} {w['body']['max_tokens']:5d} {w['kind'][:10]:10s}"+' '.join(f"{runs[n][i]['backend'][:4]} {runs[n][i]['e2e_s']:5.2f} {runs[n][i]['engine_steps']:4d}".rjust(16) for n in names))
