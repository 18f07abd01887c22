# ruff: noqa  -- a quick analysis script, kept as it ran
"""swcost.py [TAG-GLOB]: for every adaptive run (x1, s1) whose statics B/S exist, each regime switch: its priced cost,
gain, drain, load, and the realized excess over [t_switch - 1 s, t_switch + H]: per request in flight in that span,
adaptive's latency minus the static's of the role it ran on (the requests that were running on the leaving
server, and those routed to the arriving one)."""
import glob, json, os, sys
from datetime import datetime
EV = "/tmp/l37f/ev"
H = float(os.environ.get("H", "3"))
def ts(s): return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
def reqs(path):
    out = {}
    for l in open(path):
        try: d = json.loads(l)
        except ValueError: continue
        if d.get("event") == "request" and "observed_s" in d:
            end = ts(d["time"]); out[d["id"]] = (end - d["observed_s"], end, d["observed_s"], d.get("backend"))
    return out
rows = []
for log in sorted(glob.glob(f"{EV}/{sys.argv[1] if len(sys.argv) > 1 else '*'}--h200-ngram--*--x1--s1-logs/gateway-adaptive.log")):
    key = log.split("/")[-2][:-5]; tag, rest = key.split("--", 1)
    b, s = f"{EV}/B--{rest}-logs/gateway-baseline.log", f"{EV}/S--{rest}-logs/gateway-speculative.log"
    if not (os.path.exists(b) and os.path.exists(s)): continue
    A, Bq, Sq = reqs(log), reqs(b), reqs(s)
    for l in open(log):
        if '"regime_switch"' not in l: continue
        d = json.loads(l); t = ts(d["time"]); p = d.get("price") or {}
        ex = n = 0; exl = [0.0]
        for rid, (st, en, obs, be) in A.items():
            if en < t - 0.0 or st > t + H: continue
            ref = (Bq if be == "baseline" else Sq).get(rid)
            if ref is None: continue
            ex += obs - ref[2]; n += 1
            if be != d["to"]: exl[0] += obs - ref[2]
        rows.append((tag, rest.split("--")[1], d["to"][:4], d["decisions"], p.get("drain_s"), p.get("cost_s"), p.get("gain_s"), p.get("arriving_load"), p.get("cold_cache_s"), d.get("trial"), ex, n, exl[0]))
print("tag | trace | to | n | drain | cost | gain | arr | cold | trial | realized | reqs")
for r in rows:
    print(" | ".join(f"{x:.2f}" if isinstance(x, float) else str(x) for x in r))
