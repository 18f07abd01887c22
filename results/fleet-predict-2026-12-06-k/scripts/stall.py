# ruff: noqa  -- a quick analysis script, kept as it ran
"""How much of the decode-time error is the prefill of prompts that arrived on the same server during the decode.

usage: stall.py GATEWAY_LOG PREFILL_S_PER_TOKEN
Per request: the uncached prompt tokens (prompt - cached_tokens) of requests started on its instance during its
decode window; the observed decode against the predicted decode, with and without that prefill added.
"""
import statistics as st, sys
from datetime import datetime
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decompose import analyse

_, rows = analyse(sys.argv[1])
rate = float(sys.argv[2])
for r in rows:
    end = datetime.fromisoformat(r["d"]["time"].replace("Z", "+00:00")).timestamp()
    r["end"], r["start"] = end, end - r["os"]
    r["first"] = r["start"] + r["ot"]
for r in rows:
    inst = r["d"]["instance"]
    r["arrived"] = sum(q["d"]["prompt_tokens"] - q["d"].get("cached_tokens", 0) for q in rows
                       if q is not r and q["d"]["instance"] == inst and r["first"] <= q["start"] < r["end"])
def e(f):
    return round(st.median(abs(f(r) - r["os"]) / r["os"] for r in rows), 3)
print("n", len(rows), "median err", e(lambda r: r["ps"]))
print("+ arrived prefill during decode (oracle)", e(lambda r: r["ps"] + rate * r["arrived"]))
sl = [r for r in rows if r["odec"] > 0.2]
print("decode pred/obs", round(st.median(r["pdec"] / r["odec"] for r in sl), 3),
      "with arrived", round(st.median((r["pdec"] + rate * r["arrived"]) / r["odec"] for r in sl), 3))
print("stall share of observed decode (rate x arrived / decode), median", round(st.median(rate * r["arrived"] / r["odec"] for r in sl), 3),
      "sum ratio", round(sum(rate * r["arrived"] for r in sl) / sum(r["odec"] for r in sl), 3))
for role in ("baseline", "speculative"):
    s = [r for r in sl if r["d"]["backend"] == role]
    print(role, len(s), "decode pred/obs", round(st.median(r["pdec"] / r["odec"] for r in s), 3),
          "with arrived", round(st.median((r["pdec"] + rate * r["arrived"]) / r["odec"] for r in s), 3))
