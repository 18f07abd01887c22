# ruff: noqa  -- a quick analysis script, kept as it ran
"""Observed vs predicted seconds per decode step, by role and load at send (gateway logs)."""
import json, sys, collections
g = collections.defaultdict(lambda: [0, 0.0, 0.0])
for p in sys.argv[1:]:
    for l in open(p):
        if '"event":"request"' not in l: continue
        r = json.loads(l)
        if not r.get("predicted_s") or not r.get("ttft_s") or (r.get("engine_steps") or 0) < 20: continue
        steps_pred = max(r["predicted_output_tokens"] - 1, 1) / max(r["predicted_tokens_per_step"] if r["backend"] == "speculative" else 1.0, 1.0)
        ps = (r["predicted_s"] - r["predicted_ttft_s"]) / steps_pred
        os_ = (r["observed_s"] - r["ttft_s"]) / max(r["engine_steps"] - 1, 1)
        L = int(min(r.get("load_self", 0), 8))
        a = g[(r["backend"], L)]; a[0] += 1; a[1] += ps; a[2] += os_
for k in sorted(g):
    n, ps, os_ = g[k]
    print(f"{k[0]:12s} load {k[1]} n {n:4d} pred ms/step {ps/n*1000:6.2f} obs {os_/n*1000:6.2f} obs/pred {os_/ps:.2f}")
