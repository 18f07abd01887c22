# ruff: noqa  -- a quick analysis script, kept as it ran
import json,sys,glob,collections as C,statistics as st
W=json.load(open('/work/wt/w38c/runs/all-structured-code-a.jsonl'.replace('all-structured-code-a',sys.argv[1]))) if False else None
runs={}
for spec in sys.argv[2:]:
    f,_,pol=spec.partition(':')
    d=json.load(open(f)); 
    for k,x in d['policies'].items():
        if pol and k!=pol: continue
        runs[f.split('/')[-1].replace('all-structured-code-a--1+1','').replace('.json','')[-14:]+':'+k[:14]]=x['requests']
wins=C.defaultdict(dict)
for name,rs in runs.items():
    g=C.defaultdict(list)
    for r in rs: g[int(r['sent_s']//10)].append(r['e2e_s'])
    for w,v in g.items(): wins[w][name]=(len(v),sum(v))
names=list(runs)
print('win  n   '+' '.join(n[-24:].rjust(24) for n in names))
for w in sorted(wins):
    print(f'{w*10:3d} {list(wins[w].values())[0][0]:4d} '+' '.join(f'{wins[w][n][1]:24.2f}' for n in names))
print('tot      '+' '.join(f'{sum(r["e2e_s"] for r in runs[n])/len(runs[n]):24.4f}' for n in names))
print('spec share '+' '.join(f'{sum(r["backend"]=="speculative" for r in runs[n])/len(runs[n]):24.2f}' for n in names))
