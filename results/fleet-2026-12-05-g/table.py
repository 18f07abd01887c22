# ruff: noqa  -- a quick analysis script, kept as it ran
"""usage: table.py DIR  -> per (cell, version): mean e2e per seed, spec share, median prediction error (access log)"""
import json,sys,glob,os,re,statistics as st,collections as C
rows=C.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1]+'/*--s*.json')):
    m=re.match(r'(.+?)--(.+)--s(\d+)\.json', os.path.basename(f))
    v,cell,seed=m.group(1),m.group(2),int(m.group(3))
    x=json.load(open(f))['policies']['adaptive']
    s=x['summary']; share=s['routed'].get('speculative',0)/s['requests']
    err=float('nan'); log=f[:-5]+'-logs/gateway-adaptive.log'
    if os.path.exists(log):
        e=[]
        for line in open(log):
            if '"event":"request"' not in line: continue
            r=json.loads(line)
            if r.get('status')=='200' and r.get('predicted_s'): e.append(abs(r['predicted_s']-r['observed_s'])/r['observed_s'])
        err=st.median(e)
    rows[cell][(v,seed)]=(s['mean_e2e_s'],share,err,s['errors'])
for cell,d in rows.items():
    print('==',cell)
    for v in sorted({v for v,_ in d}):
        ss=sorted(s for vv,s in d if vv==v)
        print(f'  {v:6s} '+'  '.join(f's{s}: {d[(v,s)][0]:.4f} (spec {d[(v,s)][1]:.2f}, err {d[(v,s)][2]:.3f}, 5xx {d[(v,s)][3]})' for s in ss),
              ' median', round(st.median(d[(v,s)][0] for s in ss),4))
