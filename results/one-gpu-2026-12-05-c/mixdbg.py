# ruff: noqa  (a one-off analysis script of this results folder, not product code)
import json
import sys

t0 = None
for line in open(sys.argv[1]):
    if '"mixdbg"' not in line and '"regime_switch"' not in line:
        continue
    d = json.loads(line)
    if d["event"] == "regime_switch":
        print("   SWITCH ->", d["to"], d.get("price"))
        continue
    t0 = t0 or d["t"]
    m = d["models"]
    print(
        f"{d['t'] - t0:6.1f} {d['role'][:4]} r={d['ratio'] or 0:.3f} ev={d.get('ev') or 0:.3f} tr={int(bool(d.get('trial')))} L={d['mean_load']:.1f} rate={d['rate'] or 0:.1f} pend={str(d['pending'])[:4]} "
        f"B={m['baseline'][0] * 1e3:.2f}+{m['baseline'][1] * 1e6:.0f}u S={m['speculative'][0] * 1e3:.2f}+{m['speculative'][1] * 1e6:.0f}u "
        f"tps={d.get('tokens_per_step', 0):.2f} p10={d.get('tokens_per_step_p10', 0):.2f} p90={d.get('tokens_per_step_p90', 0):.2f} out={d.get('output_tokens', 0):.0f}"
    )
