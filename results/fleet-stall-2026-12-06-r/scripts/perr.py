# ruff: noqa  -- a quick analysis script, kept as it ran
"""Median |predicted − observed| / observed e2e and median predicted / observed, by arrival third, gateway logs.
python perr.py LOGDIR..."""
import json, os, statistics, sys
for d in sys.argv[1:]:
    rows = [json.loads(l) for l in open(os.path.join(d, "gateway-adaptive.log")) if '"event":"request"' in l]
    rows = [r for r in rows if r.get("predicted_s") and r.get("observed_s")]
    ids = sorted(r["id"] for r in rows); pos = {i: k * 3 // len(ids) for k, i in enumerate(ids)}
    out = []
    for t in range(3):
        rs = [r for r in rows if pos[r["id"]] == t]
        err = statistics.median(abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in rs)
        ratio = statistics.median(r["predicted_s"] / r["observed_s"] for r in rs)
        out.append(f"t{t} |err| {err:.3f} pred/obs {ratio:.2f}")
    allerr = statistics.median(abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in rows)
    print(f"{os.path.basename(d)[:28]:28s} all {allerr:.3f} | " + " | ".join(out))
