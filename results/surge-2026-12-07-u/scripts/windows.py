# ruff: noqa  -- a quick analysis script, kept as it ran
"""windows.py WORKLOAD ADAPTIVE_LOG BASE_LOG SPEC_LOG [W]: per W-second window of arrival (the workload's `t`), the
requests, adaptive's share to speculative, and mean observed e2e of adaptive and of each static on the same requests;
the summed excess of adaptive over the better static per window (seconds)."""
import json, sys
wl, a, b, s = sys.argv[1:5]; W = float(sys.argv[5]) if len(sys.argv) > 5 else 5.0
arr = {json.loads(l)["id"]: json.loads(l)["t"] for l in open(wl)}
def load(p):
    out = {}
    for l in open(p):
        d = json.loads(l)
        if d.get("event") == "request" and "observed_s" in d: out[d["id"]] = (d["observed_s"], d.get("backend"))
    return out
A, B, S = load(a), load(b), load(s)
wins = {}
for i, t in arr.items():
    if i in A and i in B and i in S: wins.setdefault(int(t // W), []).append(i)
tot = totb = tots = 0.0
print(f"{'win':>7} {'n':>4} {'spec':>5} {'adapt':>6} {'base':>6} {'spec':>6} {'excess':>7}")
for w in sorted(wins):
    ids = wins[w]; n = len(ids)
    ma = sum(A[i][0] for i in ids); mb = sum(B[i][0] for i in ids); ms = sum(S[i][0] for i in ids)
    sp = sum(A[i][1] == "speculative" for i in ids) / n
    tot += ma; totb += mb; tots += ms
    print(f"{w*W:5.0f}s {n:4d} {sp:5.2f} {ma/n:6.3f} {mb/n:6.3f} {ms/n:6.3f} {ma - min(mb, ms):7.2f}")
print(f"total adapt {tot:.1f} base {totb:.1f} spec {tots:.1f}")
