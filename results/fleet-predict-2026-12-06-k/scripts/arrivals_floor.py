# ruff: noqa  -- a quick analysis script, kept as it ran
"""After the decode-stall fix: the median error if the prompts that arrived on the same server during each decode were known
(their uncached tokens at 2.5e-5 s a token) instead of the learned mean share, and with the output length known too.

usage: arrivals_floor.py GATEWAY_LOG BENCH_JSON"""
import json, statistics as st, sys
from datetime import datetime
sys.path.insert(0, __file__.rsplit("/", 1)[0])
from decompose import analyse
log, js = sys.argv[1], sys.argv[2]
_, rows = analyse(log); rate=2.5e-5
import gzip
share = json.load((gzip.open if js.endswith('.gz') else open)(js, 'rt'))['policies']['adaptive']['learned']['learner']['decode_stall_share']
for r in rows:
    end = datetime.fromisoformat(r["d"]["time"].replace("Z", "+00:00")).timestamp()
    r["end"], r["start"] = end, end - r["os"]; r["first"] = r["start"] + r["ot"]
for r in rows:
    inst = r["d"]["instance"]
    r["arrived"] = sum(q["d"]["prompt_tokens"] - q["d"].get("cached_tokens", 0) for q in rows if q is not r and q["d"]["instance"] == inst and r["first"] <= q["start"] < r["end"])
def e(f): return round(st.median(abs(f(r)-r["os"])/r["os"] for r in rows),3)
print("as is", e(lambda r: r["ps"]), "arrivals known instead of the mean share", e(lambda r: r["pt"] + r["pdec"]*(1-share[r["d"]["backend"]]) + rate*r["arrived"]),
      "and length known", e(lambda r: r["pt"] + (r["pdec"]*(1-share[r["d"]["backend"]]))*(max(r["oo"]-1,0)/max(r["po"]-1,1)) + rate*r["arrived"]))
