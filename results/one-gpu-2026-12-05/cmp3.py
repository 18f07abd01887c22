# ruff: noqa
import json, glob, re, os, sys, statistics as st
prof = sys.argv[1] if len(sys.argv) > 1 else "h200-ngram"
tags = sys.argv[2].split(",") if len(sys.argv) > 2 else ["new4", "new6", "new7"]
def mean(d,p): return d["policies"][p]["summary"]["mean_e2e_s"]
rows=[]
for f in sorted(glob.glob(f'/tmp/w37/runs/base--{prof}--*--x1--s1.json')):
    w=re.match(rf'.*base--{prof}--(.+)--x1--s1.json',f).group(1)
    b=json.load(open(f)); best=min(mean(b,'baseline'),mean(b,'speculative'))
    r=[w, round(mean(b,'adaptive')/best,3)]
    for t in tags:
        g=f.replace('base--',t+'--')
        r.append(round(mean(json.load(open(g)),'adaptive')/best,3) if os.path.exists(g) else None)
    rows.append(r)
print(['trace','main',*tags])
for r in rows: print(r)
last=[r for r in rows if r[-1] is not None]
for i,n in enumerate(['main',*tags],1):
    xs=[r[i] for r in last if r[i] is not None]
    if xs: print(n, len(xs), 'median', st.median(xs), 'max', max(xs), '>1.05', sum(x>1.05 for x in xs), '>1.01', sum(x>1.01 for x in xs))
