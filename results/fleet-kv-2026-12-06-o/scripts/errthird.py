# ruff: noqa  -- a quick analysis script, kept as it ran
"""Median |pred - obs| / obs of e2e by arrival third, and by the context tokens on the server at the decision."""
import gzip, json, sys, os, statistics as st

for path in sys.argv[1:]:
    op = gzip.open if path.endswith(".gz") else open
    rs = [json.loads(l) for l in op(path, "rt") if '"event":"request"' in l]
    rs = [r for r in rs if r.get("predicted_s") and r.get("ttft_s") is not None]
    ids = sorted(r["id"] for r in rs); third = {i: k * 3 // len(ids) for k, i in enumerate(ids)}
    out = []
    for t in range(3):
        x = [r for r in rs if third[r["id"]] == t]
        out.append(f"t{t} {st.median(abs(r['predicted_s'] - r['observed_s']) / r['observed_s'] for r in x):.3f}"
                   f" ({st.median((r['predicted_s'] - r['observed_s']) / r['observed_s'] for r in x):+.3f})")
    print(f"{os.path.basename(os.path.dirname(path)) or path:36.36s}", " | ".join(out))
