# ruff: noqa  -- a quick analysis script, kept as it ran
"""Decompose the gateway's end-to-end prediction error into TTFT and decode terms, from its per-request log lines.

usage: decompose.py GATEWAY_LOG [...]
For each log: the median |pred - obs| / obs, and the same with one term replaced by what was observed (an oracle
for that term): the term whose oracle removes most of the error dominates.
"""
import gzip, json, statistics as st, sys


def lines(path):
    op = gzip.open if path.endswith(".gz") else open
    for raw in op(path, "rt"):
        i = raw.find("{")
        if i < 0:
            continue
        try:
            d = json.loads(raw[i:])
        except ValueError:
            continue
        if d.get("event") == "request" and d.get("status") == "200" and d.get("predicted_s") is not None:
            yield d


def med(xs):
    return round(st.median(xs), 3) if xs else None


def analyse(path):
    rs = list(lines(path))
    err, rows = [], []
    for d in rs:
        ps, pt, os_, ot = d["predicted_s"], d.get("predicted_ttft_s"), d["observed_s"], d.get("ttft_s")
        if pt is None or ot is None:
            continue
        po, oo = d.get("predicted_output_tokens") or 1, d.get("completion_tokens") or 1
        ptps = d.get("predicted_tokens_per_step") or 1.0
        steps = d.get("engine_steps")
        if d["backend"] == "baseline":
            ptps = 1.0
        pdec, odec = ps - pt, os_ - ot
        psteps = max(po - 1, 0) / max(ptps, 1.0)
        osteps = (steps - 1) if steps else max(oo - 1, 0)
        pstep = pdec / psteps if psteps > 0 else None
        ostep = odec / osteps if osteps > 0 else None
        rows.append(dict(d=d, ps=ps, pt=pt, os=os_, ot=ot, pdec=pdec, odec=odec, po=po, oo=oo, ptps=ptps,
                         psteps=psteps, osteps=osteps, pstep=pstep, ostep=ostep))
    def e(f):
        return med([abs(f(r) - r["os"]) / r["os"] for r in rows])
    out = {"n": len(rows), "median_err": e(lambda r: r["ps"]),
           "oracle_ttft": e(lambda r: r["ot"] + r["pdec"]),
           "oracle_decode": e(lambda r: r["pt"] + r["odec"]),
           # decode = steps x step: replace the number of steps, or the step time, by what was observed
           "oracle_steps": e(lambda r: r["pt"] + (r["osteps"] * r["pstep"] if r["pstep"] else r["pdec"])),
           "oracle_out_len": e(lambda r: r["pt"] + (max(r["oo"] - 1, 0) / r["ptps"] * r["pstep"] if r["pstep"] else r["pdec"])),
           "oracle_step_s": e(lambda r: r["pt"] + (r["psteps"] * r["ostep"] if r["ostep"] else r["pdec"])),
           "ttft_share_of_obs": med([r["ot"] / r["os"] for r in rows]),
           "ttft_pred/obs": med([r["pt"] / r["ot"] for r in rows if r["ot"] > 0]),
           "decode_pred/obs": med([r["pdec"] / r["odec"] for r in rows if r["odec"] > 0]),
           "e2e_pred/obs": med([r["ps"] / r["os"] for r in rows]),
           "out_pred/obs": med([r["po"] / r["oo"] for r in rows]),
           "steps_pred/obs": med([r["psteps"] / r["osteps"] for r in rows if r["osteps"] > 0]),
           "step_s_pred/obs": med([r["pstep"] / r["ostep"] for r in rows if r["pstep"] and r["ostep"]]),
           "mean_abs_ttft_err_s": round(st.mean(abs(r["pt"] - r["ot"]) for r in rows), 4),
           "mean_abs_decode_err_s": round(st.mean(abs(r["pdec"] - r["odec"]) for r in rows), 4),
           "median_obs_ttft_s": med([r["ot"] for r in rows]), "median_pred_ttft_s": med([r["pt"] for r in rows]),
           "median_obs_s": med([r["os"] for r in rows]),
           }
    for role in ("baseline", "speculative"):
        sub = [r for r in rows if r["d"]["backend"] == role]
        out[role] = {"n": len(sub), "median_err": med([abs(r["ps"] - r["os"]) / r["os"] for r in sub]),
                     "ttft_pred/obs": med([r["pt"] / r["ot"] for r in sub if r["ot"] > 0]),
                     "decode_pred/obs": med([r["pdec"] / r["odec"] for r in sub if r["odec"] > 0]),
                     "steps_pred/obs": med([r["psteps"] / r["osteps"] for r in sub if r["osteps"] > 0]),
                     "step_s_pred/obs": med([r["pstep"] / r["ostep"] for r in sub if r["pstep"] and r["ostep"]])}
    cached = [r for r in rows if r["d"].get("cached_tokens")]
    out["with_cached_tokens"] = {"n": len(cached), "ttft_pred/obs": med([r["pt"] / r["ot"] for r in cached]),
                                 "median_err": med([abs(r["ps"] - r["os"]) / r["os"] for r in cached])}
    nc = [r for r in rows if not r["d"].get("cached_tokens")]
    out["without_cached_tokens"] = {"n": len(nc), "ttft_pred/obs": med([r["pt"] / r["ot"] for r in nc]),
                                    "median_err": med([abs(r["ps"] - r["os"]) / r["os"] for r in nc])}
    return out, rows


if __name__ == "__main__":
    for p in sys.argv[1:]:
        out, _ = analyse(p)
        print(p)
        for k, v in out.items():
            print(f"  {k}: {v}")
