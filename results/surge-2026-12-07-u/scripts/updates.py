# ruff: noqa  -- a quick analysis script, kept as it ran
"""updates.py LOG T0 T1: the DEBUG `regime_update` events between T0 and T1 seconds from the first log line."""
import json, re, sys
from datetime import datetime
def t(d): return datetime.fromisoformat(d["time"].replace("Z", "+00:00")).timestamp()
lines = [json.loads(l) for l in open(sys.argv[1])]; t0 = t(lines[0]); a, b = float(sys.argv[2]), float(sys.argv[3])
for d in lines:
    if d.get("event") != "regime_update" or not a <= t(d) - t0 <= b: continue
    s = d["state"]; p = d.get("price") or ""
    m = {k: float(v) for k, v in re.findall(r"(\w+)=([-\d.e+inf]+)", p)} if p else {}
    print(f"{t(d)-t0:6.2f} n{d['n']:4d} {s['role'][:4]} pend {str(s['pending'])[:4]:4} tr {int(s['pending_trial'])} "
          f"hope {s['ratio'] or 0:.3f} ev {s['evidence'] or 0:.3f} load {d['load']:5.2f} "
          + (f"drain {m.get('drain_s',0):.2f} cost {m.get('cost_s',0):7.2f} gain {m.get('gain_s',0):6.2f} arr {m.get('arriving_load',0):5.1f}" if m else ""))
