# ruff: noqa  -- an analysis script, kept as it ran
# per moved request: main vs branch (moves on) end-to-end; usage: cmp.py MAIN.json BRANCH.json BRANCH-gateway.log
import json,sys,re
a=json.load(open(sys.argv[1]))['policies']['adaptive']['requests']; b=json.load(open(sys.argv[2]))['policies']['adaptive']['requests']
A={r['id']:r for r in a}; B={r['id']:r for r in b}
moved=set(re.findall(r'"midstream_move","id":"([^"]+)"', open(sys.argv[3]).read()))
tot=0
for i in sorted(moved):
    ra,rb=A[i],B[i]; tot+=ra['e2e_s']-rb['e2e_s']
    print(i, 'main',ra['backend'],round(ra['e2e_s'],3),'mid',rb['backend'],round(rb['e2e_s'],3), rb['completion_tokens'], rb['engine_steps'])
print('moved: sum main-mid', round(tot,3), 'per request of cell', round(tot/len(a)*1e3,2),'ms')
print('0001714', A.get('azure-code-0001714',{}).get('backend'), A.get('azure-code-0001714',{}).get('e2e_s'), B.get('azure-code-0001714',{}).get('backend'), B.get('azure-code-0001714',{}).get('e2e_s'))
print('means', sum(r['e2e_s'] for r in a)/len(a), sum(r['e2e_s'] for r in b)/len(b))
