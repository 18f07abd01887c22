# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per-request decomposition of adaptive's prediction error from gateway access logs.
usage: anal.py LOGDIR [LOGDIR...]"""
import collections as C
import glob
import json
import statistics as st
import sys


def load(d):
    out = []
    for f in sorted(glob.glob(d + "/gateway-*.log")):
        for line in open(f):
            if '"event":"request"' not in line:
                continue
            r = json.loads(line)
            if r.get("status") != "200" or r.get("predicted_s") is None:
                continue
            r["_run"] = f
            out.append(r)
    return out

def med(x):
    return st.median(x) if x else float("nan")

for d in sys.argv[1:]:
    rs = load(d)
    print("==", d, len(rs))
    groups = C.defaultdict(list)
    for r in rs:
        groups[(r["class"], r["temperature"], r["backend"])].append(r)
    print(f"{'class/bucket/role':34s} {'n':>4s} {'obs_e2e':>8s} {'pred_e2e':>8s} {'err':>6s} {'O_pred':>7s} {'O_obs':>7s} {'Oerr':>6s} {'T_pred':>6s} {'T_obs':>6s} {'ttft_p':>7s} {'ttft_o':>7s} {'step_p':>7s} {'step_o':>7s} {'load':>5s}")
    for k in sorted(groups):
        g = groups[k]
        obs = [r["observed_s"] for r in g]; pred = [r["predicted_s"] for r in g]
        err = [abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in g]
        Op = [r["predicted_output_tokens"] for r in g]; Oo = [r["completion_tokens"] for r in g]
        Oerr = [abs(r["predicted_output_tokens"] - r["completion_tokens"]) / max(r["completion_tokens"], 1) for r in g]
        Tp = [r.get("predicted_tokens_per_step") or 1 for r in g]
        To = sum(max(r["completion_tokens"] - 1, 0) for r in g) / max(sum(max(r["engine_steps"] - 1, 0) for r in g), 1)
        tp = [r["predicted_ttft_s"] for r in g]; to = [r["ttft_s"] for r in g]
        # per decode step times
        sp, so = [], []
        for r in g:
            T = (r.get("predicted_tokens_per_step") or 1) if r["backend"] == "speculative" else 1.0
            nsp = max(r["predicted_output_tokens"] - 1, 0) / max(T, 1)
            if nsp > 0:
                sp.append((r["predicted_s"] - r["predicted_ttft_s"]) / nsp)
            if r["engine_steps"] > 1:
                so.append((r["observed_s"] - r["ttft_s"]) / (r["engine_steps"] - 1))
        print(f"{'/'.join(k):34s} {len(g):4d} {st.mean(obs):8.3f} {st.mean(pred):8.3f} {med(err):6.2f} {st.mean(Op):7.1f} {st.mean(Oo):7.1f} {med(Oerr):6.2f} {med(Tp):6.2f} {To:6.2f} {st.mean(tp):7.3f} {st.mean(to):7.3f} {1000*med(sp):7.2f} {1000*med(so):7.2f} {st.mean(r['load_self'] for r in g):5.2f}")
    err = [abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in rs]
    print("median err", round(med(err), 3), "mean obs", round(st.mean(r["observed_s"] for r in rs), 4))
