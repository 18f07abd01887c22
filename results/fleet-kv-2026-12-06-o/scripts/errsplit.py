# ruff: noqa  -- a quick analysis script, kept as it ran
"""Median |pred - obs| / obs of e2e, and the sums of predicted / observed TTFT and decode, per role and arrival third."""
import gzip, json, sys, os, statistics as st

def rows(path):
    op = gzip.open if path.endswith(".gz") else open
    rs = [json.loads(l) for l in op(path, "rt") if '"event":"request"' in l]
    return [r for r in rs if r.get("predicted_s") and r.get("ttft_s") is not None]

for path in sys.argv[1:]:
    rs = rows(path)
    ids = sorted(r["id"] for r in rs); third = {i: k * 3 // len(ids) for k, i in enumerate(ids)}
    err = st.median(abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in rs)
    out = [f"{os.path.basename(os.path.dirname(path)) or path:40.40s} err {err:.3f}"]
    for role in ("baseline", "speculative"):
        x = [r for r in rs if r["backend"] == role]
        t = sum(r["ttft_s"] for r in x) / sum(r["predicted_ttft_s"] for r in x)
        d = sum(r["observed_s"] - r["ttft_s"] for r in x) / sum(r["predicted_s"] - r["predicted_ttft_s"] for r in x)
        e = st.median(abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in x)
        sign = st.median((r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in x)
        out.append(f"{role[:4]} n {len(x)} ttft o/p {t:.2f} dec o/p {d:.2f} err {e:.3f} signed {sign:+.3f}")
    print(" | ".join(out))
