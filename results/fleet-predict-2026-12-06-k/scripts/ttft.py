# ruff: noqa  -- a quick analysis script, kept as it ran
"""Time to first token: predicted over observed, by whether a queue was priced ahead and whether cached tokens were.

usage: ttft.py GATEWAY_LOG [PREFILL_S_PER_TOKEN]
"""
import statistics as st, sys
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decompose import analyse

_, rows = analyse(sys.argv[1])
def show(name, rs):
    if not rs:
        return
    print(f"{name:34s} n {len(rs):4d}  ttft pred/obs {st.median(r['pt'] / r['ot'] for r in rs):.3f}  "
          f"pred {st.median(r['pt'] for r in rs):.3f} obs {st.median(r['ot'] for r in rs):.3f}  "
          f"e2e err {st.median(abs(r['ps'] - r['os']) / r['os'] for r in rs):.3f}  "
          f"oracle ttft {st.median(abs(r['ot'] + r['pdec'] - r['os']) / r['os'] for r in rs):.3f}")
show("all", rows)
show("no queue priced", [r for r in rows if not r["d"].get("queued_tokens")])
show("queue priced", [r for r in rows if r["d"].get("queued_tokens")])
for role in ("baseline", "speculative"):
    show(role + ", no queue", [r for r in rows if not r["d"].get("queued_tokens") and r["d"]["backend"] == role])
    show(role + ", queue", [r for r in rows if r["d"].get("queued_tokens") and r["d"]["backend"] == role])
if len(sys.argv) > 2:  # what the prediction would be at this prefill rate, the step as predicted
    rate = float(sys.argv[2])
    nq = [r for r in rows if not r["d"].get("queued_tokens")]
    xs = [(r["d"]["prompt_tokens"] - r["d"].get("cached_tokens", 0), r["ot"]) for r in nq]
    print("no queue: observed ttft / (rate x uncached) median", round(st.median(o / (rate * max(u, 1)) for u, o in xs), 3))
    import numpy as np
    A = np.array([[1.0, u] for u, _ in xs]); b = np.array([o for _, o in xs])
    print("no queue: ttft = a + b x uncached, fit", np.linalg.lstsq(A, b, rcond=None)[0])
