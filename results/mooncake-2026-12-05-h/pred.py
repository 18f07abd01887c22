"""TTFT and e2e prediction vs observation per run, from the gateway access logs of a bench (adaptive runs)."""
import glob
import json
import statistics as st
import sys

for path in sorted(glob.glob(sys.argv[1] + "/gateway-adaptive*.log")):
    with open(path) as f:
        rs = [json.loads(line) for line in f if '"event":"request"' in line and '"status":"200"' in line]
    rs = [r for r in rs if r.get("predicted_ttft_s") and r.get("ttft_s")]
    if not rs:
        continue
    pt, ot = st.mean(r["predicted_ttft_s"] for r in rs), st.mean(r["ttft_s"] for r in rs)
    ratio = st.median(r["ttft_s"] / r["predicted_ttft_s"] for r in rs)
    err = st.median(abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in rs if r.get("predicted_s"))
    print(f"{path.rsplit('/',1)[-1]}: n={len(rs)} predicted TTFT {pt:.3f} observed {ot:.3f} (mean ratio {pt/ot:.2f}; "
          f"median observed/predicted {ratio:.2f}); median e2e error {err:.3f}")
