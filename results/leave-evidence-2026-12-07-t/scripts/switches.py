# ruff: noqa  -- a quick analysis script, kept as it ran
"""switches.py RUN-logs/gateway-adaptive.log...: each run's regime switches (the INFO `regime_switch` events, in
decision order), seconds from the gateway's first log line: the role, the mix as hoped and at the evidence, whether a
trial, and the switch's price (drain, co-running cost, gain, the arriving server's load)."""
import json, sys
from datetime import datetime
def t(d): return datetime.fromisoformat(d["time"].replace("Z", "+00:00")).timestamp()
for path in sys.argv[1:]:
    lines = [json.loads(l) for l in open(path)]
    t0 = t(lines[0])
    print("==", path)
    for d in lines:
        if d.get("event") != "regime_switch": continue
        p = d.get("price") or {}
        f = lambda k: float(p.get(k) or 0.0)
        print(f"  {t(d) - t0:6.1f} s  -> {d['to']:<11} hope {d['ratio'] or 0:.3f} evidence {d['evidence'] or 0:.3f} "
              f"trial {d['trial']!s:<5} drain {f('drain_s'):.2f} cost {f('cost_s'):.2f} gain {f('gain_s'):.2f} "
              f"load {f('arriving_load'):.1f}")
