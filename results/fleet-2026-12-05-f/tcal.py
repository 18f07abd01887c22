# ruff: noqa  -- a quick analysis script, kept as it ran
"""Acceptance calibration of requests sent to speculative servers: predicted decode steps at the true length
(Σ (O-1)/T_pred) against the steps taken (Σ steps-1), per class/bucket, binned by T_pred."""
import collections as C
import glob
import json
import sys

for d in sys.argv[1:]:
    g = C.defaultdict(lambda: [0, 0.0, 0, 0])
    for f in sorted(glob.glob(d + "/gateway-*.log")):
        for line in open(f):
            if '"event":"request"' not in line: continue
            r = json.loads(line)
            if r.get("status") != "200" or r["backend"] != "speculative" or not r.get("predicted_tokens_per_step"): continue
            if r["engine_steps"] < 2: continue
            T = r["predicted_tokens_per_step"]
            b = "T<1.3" if T < 1.3 else "T<2" if T < 2 else "T<3" if T < 3 else "T>=3"
            for key in ((r["class"], r["temperature"], b), (r["class"], r["temperature"], "all")):
                x = g[key]; x[0] += 1; x[1] += (r["completion_tokens"] - 1) / T; x[2] += r["engine_steps"] - 1; x[3] += r["completion_tokens"] - 1
    print("==", d)
    for k in sorted(g):
        n, ps, s, tok = g[k]
        if n >= 5: print(f"  {'/'.join(k):32s} n {n:4d} pred steps {ps:7.0f} taken {s:6d} ratio {ps/max(s,1):5.2f}  delivered T {tok/max(s,1):5.2f} implied pred T {tok/max(ps,1):5.2f}")
