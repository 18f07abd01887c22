# ruff: noqa  -- a quick analysis script, kept as it ran
"""Observed / predicted decode by role and by arrival third (request id order), gateway access logs."""
import json, sys, os
for d in sys.argv[1:]:
    rows = [json.loads(l) for l in open(os.path.join(d, "gateway-adaptive.log")) if '"event":"request"' in l]
    rows = [r for r in rows if r.get("predicted_s") and r.get("ttft_s") is not None]
    ids = sorted(r["id"] for r in rows); pos = {i: k * 3 // len(ids) for k, i in enumerate(ids)}
    out = []
    for role in ("baseline", "speculative"):
        for t in range(3):
            rs = [r for r in rows if r["backend"] == role and pos[r["id"]] == t]
            p = sum(r["predicted_s"] - r["predicted_ttft_s"] for r in rs); o = sum(r["observed_s"] - r["ttft_s"] for r in rs)
            out.append(f"{role[:4]} t{t} {len(rs):3d} {o / max(p, 1e-9):.2f}")
    print(os.path.basename(d)[:24], " | ".join(out))
