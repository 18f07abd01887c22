# ruff: noqa  (a one-off analysis script of this results folder, not product code)
"""Per-window: adaptive (file A) vs statics (file S) on the same requests. usage: win.py STATIC.json ADAPTIVE.json [w]"""

import json
import re
import sys

S = json.load(open(sys.argv[1]))["policies"]
A = json.load(open(sys.argv[2]))["policies"]
w = float(sys.argv[3]) if len(sys.argv) > 3 else 5.0
def by(p):
    return {r["id"]: r for r in p["requests"] if r.get("repeat", 0) == 0}
base, spec, ad = by(S["baseline"]), by(S["speculative"]), by(A["adaptive"])
ids = sorted(ad, key=lambda i: ad[i]["sent_s"])
tb, ts, ta = (sum(x[i]["e2e_s"] for i in ids) for x in (base, spec, ad))
print(
    f"A {ta / len(ids):.3f} B {tb / len(ids):.3f} S {ts / len(ids):.3f} -> {ta / min(tb, ts):.3f}; hindsight-window ",
    end="",
)
rows = {}
for i in ids:
    rows.setdefault(int(ad[i]["sent_s"] // w), []).append(i)
hs = sum(min(sum(base[i]["e2e_s"] for i in g), sum(spec[i]["e2e_s"] for i in g)) for g in rows.values())
print(f"{hs / min(tb, ts):.3f}")
for k, g in sorted(rows.items()):
    sb = sum(base[i]["e2e_s"] for i in g)
    ss = sum(spec[i]["e2e_s"] for i in g)
    sa = sum(ad[i]["e2e_s"] for i in g)
    mixes = [float(m.group(1)) for i in g for m in [re.search(r"mix ([0-9.]+)x", ad[i]["reason"])] if m]
    reasons = {}
    for i in g:
        r = ad[i]["reason"].split()[0]
        reasons[r] = reasons.get(r, 0) + 1
    pend = sum("when free" in ad[i]["reason"] for i in g)
    nstruct = sum(ad[i]["class"] in ("structured", "extraction", "long_context", "code") for i in g)
    print(
        f"{k * w:4.0f} n={len(g):3d} st={nstruct / len(g):.2f} sp={sum(ad[i]['backend'] == 'speculative' for i in g):3d} "
        f"A={sa / len(g):.2f} B={sb / len(g):.2f} S={ss / len(g):.2f} better={'B' if sb < ss else 'S'} "
        f"dA={(sa - min(sb, ss)):+6.1f}s mix={min(mixes) if mixes else 0:.2f}-{max(mixes) if mixes else 0:.2f} pend={pend} "
        + " ".join(f"{r}:{c}" for r, c in sorted(reasons.items()))
    )
