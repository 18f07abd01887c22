# ruff: noqa  -- a quick analysis script, kept as it ran
"""The floor of the median end-to-end error when the output length is predicted by one number per max_tokens cap.

usage: length_floor.py GATEWAY_LOG WINDOW.jsonl
Every other term as observed (TTFT, step time, tokens per step), the length a constant per cap chosen in hindsight to
minimise the median error (the best any predictor of length from max_tokens alone can do on that window); also the
window's own numbers: how the trace's output length relates to what the request says.
"""
import json, math, statistics as st, sys, collections
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decompose import analyse

_, rows = analyse(sys.argv[1])
items = {json.loads(l)["id"]: json.loads(l) for l in open(sys.argv[2])}
by = collections.defaultdict(list)
for r in rows:
    r["cap"] = items[r["d"]["id"]]["body"].get("max_tokens")
    by[r["cap"]].append(r)

def e2e_with_len(r, L):  # observed TTFT, observed seconds per output token, length L
    per_tok = r["odec"] / max(r["oo"] - 1, 1) if r["oo"] > 1 else r["odec"]
    return r["ot"] + per_tok * max(L - 1, 0)

best = {}
for cap, rs in by.items():
    cands = sorted({r["oo"] for r in rs})
    best[cap] = min(cands, key=lambda L: st.median(abs(e2e_with_len(r, L) - r["os"]) / r["os"] for r in rs))
errs = [abs(e2e_with_len(r, best[r["cap"]]) - r["os"]) / r["os"] for r in rows]
print("median error, everything observed but the length, the length the best constant per cap:", round(st.median(errs), 3))
print("  constants:", dict(sorted(best.items())))
pred_len = [abs(e2e_with_len(r, r["po"]) - r["os"]) / r["os"] for r in rows]
print("median error, everything observed but the length, the length as the gateway predicted it:", round(st.median(pred_len), 3))
ws = [json.loads(l) for l in open(sys.argv[2])]
y = [math.log(w["trace"]["output_tokens"]) for w in ws]
p = [math.log(w["trace"]["prompt_tokens"]) for w in ws]
print("trace: corr(log prompt, log output)", round(st.correlation(p, y), 3), "lag-1 corr of log output", round(st.correlation(y[:-1], y[1:]), 3))
kinds = collections.defaultdict(list)
for w in ws:
    kinds[(w["body"].get("max_tokens"), w["kind"])].append(w["trace"]["output_tokens"])
print("median output by (cap, kind), caps with >= 20:", {f"{c}/{k}": st.median(v) for (c, k), v in sorted(kinds.items()) if len(v) >= 20})
