# ruff: noqa  -- a quick analysis script, kept as it ran
"""cb.py TAG...: adaptive ÷ the better static per seed of the Azure code burst (statics B, S of seed 1)."""
import json, sys, statistics
def m(p):
    try: return json.load(open(p))["policies"]["adaptive"]["runs"][0]
    except Exception: return None
b=json.load(open("/tmp/l37f/ev/B--h200-ngram--azure-code-burst--x1--s1.json"))["policies"]["baseline"]["runs"][0]["mean_e2e_s"]
s=json.load(open("/tmp/l37f/ev/S--h200-ngram--azure-code-burst--x1--s1.json"))["policies"]["speculative"]["runs"][0]["mean_e2e_s"]
best=min(b,s); print(f"baseline {b:.3f} s, speculative {s:.3f} s")
tags=sys.argv[1:]; allr={t:[] for t in tags}
print("| seed | " + " | ".join(tags) + " |"); print("|---" * (len(tags)+1) + "|")
for seed in range(1,40):
    row=[]
    for t in tags:
        r=m(f"/tmp/l37f/ev/{t}--h200-ngram--azure-code-burst--x1--s{seed}.json")
        if r: allr[t].append(r['mean_e2e_s']/best)
        row.append("-" if r is None else f"{r['mean_e2e_s']/best:.3f} ({100*r.get('speculative_share',0):.0f}%)")
    if any(x!="-" for x in row): print(f"| {seed} | " + " | ".join(row) + " |")
for t in tags:
    v=allr[t]
    if v: print(f"{t}: n={len(v)} median {statistics.median(v):.3f} worst {max(v):.3f} above 1.05: {sum(x>1.05 for x in v)}")
