# ruff: noqa  -- a quick analysis script, kept as it ran
"""reqs.py WORKLOAD ADAPTIVE_LOG BASE_LOG SPEC_LOG T0 T1: each request arriving in [T0, T1): adaptive's backend and
observed e2e (migrated marked), and each static's."""
import json, sys
wl, a, b, s = sys.argv[1:5]; t0, t1 = float(sys.argv[5]), float(sys.argv[6])
arr = {json.loads(l)["id"]: json.loads(l)["t"] for l in open(wl)}
def load(p):
    out = {}
    for l in open(p):
        d = json.loads(l)
        if d.get("event") == "request" and "observed_s" in d: out[d["id"]] = d
    return out
A, B, S = load(a), load(b), load(s)
for i, t in sorted(arr.items(), key=lambda x: x[1]):
    if not t0 <= t < t1 or i not in A: continue
    d = A[i]
    print(f"{t:6.2f} {d['class'][:6]:6} {d['backend'][:4]} {'M' if d.get('migrations') or d.get('moved') else ' '} "
          f"{d['observed_s']:.3f} pred {d['predicted_s']:.3f} out {d.get('completion_tokens')} | B {B[i]['observed_s']:.3f} S {S[i]['observed_s']:.3f}")
