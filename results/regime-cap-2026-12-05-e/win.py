import json, sys, collections
import os, gzip
ev=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'raw'); key=sys.argv[1]; tag=sys.argv[2]; W=float(sys.argv[3]) if len(sys.argv)>3 else 5
def reqs(t, pol):
    d=json.load(gzip.open(f'{ev}/{t}--{key}.json.gz')); return {r['id']: r for r in d['policies'][pol]['requests']}
B=reqs('B','baseline'); S=reqs('S','speculative'); A=reqs(tag,'adaptive')
win=collections.defaultdict(lambda: [0,0,0,0,0,collections.Counter()])
for i,a in A.items():
    w=int(a['sent_s']//W); x=win[w]; x[0]+=1; x[1]+=a['backend']=='speculative'; x[2]+=a['e2e_s']; x[3]+=B[i]['e2e_s']; x[4]+=S[i]['e2e_s']; x[5][a['reason'].split()[0]]+=1
tot=[0,0,0]
for w in sorted(win):
    n,s,a,b,sp,rs=win[w]; tot[0]+=a; tot[1]+=b; tot[2]+=sp
    print(f'{w*W:5.0f}s n={n:3d} spec={s:3d} A={a/n:.2f} B={b/n:.2f} S={sp/n:.2f} dA={a-min(b,sp):+6.1f}s', dict(rs))
print('total A %.1f B %.1f S %.1f' % tuple(tot))
