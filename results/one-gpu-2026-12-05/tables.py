# ruff: noqa
import json, glob, re, os, statistics as st, subprocess
def mean(d,p): return d["policies"][p]["summary"]["mean_e2e_s"]
def load(p): return json.load(open(p)) if os.path.exists(p) else None
def share(d): rs=d["policies"]["adaptive"]["requests"]; return 100*sum(r["backend"]=="speculative" for r in rs)/len(rs)
def nsw(p):
    log=p.replace(".json","-logs/gateway-adaptive.log")
    return sum('"regime_switch"' in l for l in open(log)) if os.path.exists(log) else None
desc = {}
for line in open('/tmp/w37/members.md'):
    parts=[x.strip() for x in line.strip().strip('|').split('|')]; desc[parts[0]]=parts[3]
for m in (25,26,27,28,29,30):
    desc[f"bursty-{m}"]=subprocess.run(["/work/wt/w37/.venv/bin/python","-c",f"from gateway.workloads.family import describe; print(describe({m}))"],capture_output=True,text=True).stdout.strip()
def key(w): return (0, int(w.split('-')[1])) if re.match(r'bursty-\d+$', w) else (1, w)
for prof in ("h200-ngram", "h200-ngram-dynk"):
    print(f"\n### {prof}, time scale 1 (adaptive ÷ the better static of the same cell; seed 1 unless said)\n")
    print("| trace | phases (length @ rate, structured share) | baseline s | speculative s | main | new4 | **final** | final, seed 2 | final: switches, → spec % |")
    print("|---|---|---|---|---|---|---|---|---|")
    ws=[re.match(rf'.*base--{prof}--(.+)--x1--s1.json',f).group(1) for f in glob.glob(f'/tmp/w37/runs/base--{prof}--*--x1--s1.json')]
    for w in sorted(ws, key=key):
        b=load(f'/tmp/w37/runs/base--{prof}--{w}--x1--s1.json'); best=min(mean(b,'baseline'),mean(b,'speculative'))
        f7=f'/tmp/w37/runs/new7--{prof}--{w}--x1--s1.json'; n7=load(f7)
        if n7 is None: continue
        n4=load(f'/tmp/w37/runs/new4--{prof}--{w}--x1--s1.json'); s2=load(f'/tmp/w37/runs/new7--{prof}--{w}--x1--s2.json')
        r=lambda d: f"{mean(d,'adaptive')/best:.3f}" if d else "—"
        print(f"| {w} | {desc.get(w,'built-in')} | {mean(b,'baseline'):.3f} | {mean(b,'speculative'):.3f} | {mean(b,'adaptive')/best:.3f} | {r(n4)} | **{r(n7)}** | {r(s2)} | {nsw(f7)}, {share(n7):.0f} |")
