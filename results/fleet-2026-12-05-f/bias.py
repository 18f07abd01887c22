# ruff: noqa  -- a quick analysis script, kept as it ran
import glob
import json
import statistics as st
import sys

for d in sys.argv[1:]:
    rs=[]
    for f in sorted(glob.glob(d+"/gateway-*.log")):
        for line in open(f):
            if '"event":"request"' in line:
                r=json.loads(line)
                if r.get("status")=="200" and r.get("predicted_s"): rs.append(r)
    ratio=[r["predicted_s"]/r["observed_s"] for r in rs]
    rO=[r["predicted_output_tokens"]/max(r["completion_tokens"],1) for r in rs]
    rt=[r["predicted_ttft_s"]/r["ttft_s"] for r in rs if r.get("ttft_s")]
    # decode part: predicted decode / observed decode
    rd=[(r["predicted_s"]-r["predicted_ttft_s"])/(r["observed_s"]-r["ttft_s"]) for r in rs if r["observed_s"]-r["ttft_s"]>0.005]
    # decode with true O: predicted per-step x true steps
    rdt=[]
    for r in rs:
        T=(r.get("predicted_tokens_per_step") or 1) if r["backend"]=="speculative" else 1.0
        n=max(r["predicted_output_tokens"]-1,0)/max(T,1)
        if n>0 and r["engine_steps"]>1 and r["observed_s"]-r["ttft_s"]>0.005:
            rdt.append((r["predicted_s"]-r["predicted_ttft_s"])/n*(r["engine_steps"]-1)/(r["observed_s"]-r["ttft_s"]))
    q=lambda x: [round(v,3) for v in st.quantiles(x,n=4)]
    print(d, len(rs), "pred/obs e2e q1,med,q3", q(ratio), "O", q(rO), "ttft", q(rt), "decode", q(rd), "decode@true steps", q(rdt))
    print("   median err", round(st.median(abs(x-1) for x in ratio),3), "if x1.2:", round(st.median(abs(1.2*x-1) for x in ratio),3), "x1.35:", round(st.median(abs(1.35*x-1) for x in ratio),3))
