# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per window and run: observed / predicted decode seconds (e2e - TTFT) by role, from the gateway's access logs.

python decbias.py LOG_DIR_GLOB...   (each a bench run's `-logs` folder with gateway-adaptive.log)"""
import json, sys, os, glob
print("| run | baseline: n, decode obs/pred | speculative: n, decode obs/pred | spec ÷ baseline | spec output tokens obs/pred | baseline output tokens obs/pred |")
print("|---|---|---|---|---|---|")
for d in sys.argv[1:]:
    p = os.path.join(d, "gateway-adaptive.log")
    if not os.path.exists(p): continue
    agg = {}
    for l in open(p):
        if '"event":"request"' not in l: continue
        r = json.loads(l)
        if not r.get("predicted_s") or r.get("ttft_s") is None: continue
        a = agg.setdefault(r["backend"], [0, 0.0, 0.0, 0.0, 0])
        a[0] += 1; a[1] += r["predicted_s"] - r["predicted_ttft_s"]; a[2] += r["observed_s"] - r["ttft_s"]
        a[3] += r.get("predicted_output_tokens") or 0; a[4] += r.get("completion_tokens") or 0
    b, s = agg.get("baseline"), agg.get("speculative")
    rb, rs = b[2] / b[1], s[2] / s[1]
    print(f"| {os.path.basename(d).replace('--2xbaseline,2xspeculative-logs', '')} | {b[0]}, {rb:.2f} | {s[0]}, {rs:.2f} | {rs / rb:.2f} | {s[4] / s[3]:.2f} | {b[4] / b[3]:.2f} |")
