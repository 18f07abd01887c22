# ruff: noqa  -- a quick analysis script, kept as it ran
"""Median e2e error, and what it would read with each part of the prediction replaced by the truth: the output length
(decode scaled by completion / predicted tokens), the TTFT, the decode step (decode at the observed seconds a token)."""
import gzip, json, sys, os, statistics as st

def rows(path):
    op = gzip.open if path.endswith(".gz") else open
    rs = [json.loads(l) for l in op(path, "rt") if '"event":"request"' in l]
    return [r for r in rs if r.get("predicted_s") and r.get("ttft_s") is not None and r.get("completion_tokens")]

def med(xs): return st.median(xs)

for path in sys.argv[1:]:
    rs = rows(path)
    e, eo, et, eot = [], [], [], []
    for r in rs:
        obs, pt, pd = r["observed_s"], r["predicted_ttft_s"], r["predicted_s"] - r["predicted_ttft_s"]
        k = r["completion_tokens"] / max(r["predicted_output_tokens"], 1)
        e.append(abs(r["predicted_s"] - obs) / obs)
        eo.append(abs(pt + pd * k - obs) / obs)
        et.append(abs(r["ttft_s"] + pd - obs) / obs)
        eot.append(abs(r["ttft_s"] + pd * k - obs) / obs)
    print(f"{os.path.basename(os.path.dirname(path)) or path:40.40s} n {len(rs)} err {med(e):.3f}  exact length {med(eo):.3f}"
          f"  exact ttft {med(et):.3f}  both exact (the step's error alone) {med(eot):.3f}")
