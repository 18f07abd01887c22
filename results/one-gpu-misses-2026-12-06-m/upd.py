# ruff: noqa  -- a quick analysis script, kept as it ran
import json, re, sys
for line in open(sys.argv[1]):
    if '"regime_update"' not in line: continue
    d = json.loads(line); s = d['state']; p = d.get('price')
    if p:
        v = p if isinstance(p, dict) else dict(re.findall(r"(\w+)=([-\w.]+)", p)); p = "drain %.2f cost %.2f gain %.2f L %.1f" % tuple(float(v[k] if v[k] is not None else "nan") for k in ("drain_s", "cost_s", "gain_s", "arriving_load"))
    print(d['n'], s['role'][:4], f"hope {s['ratio'] or 0:.3f} ev {s['evidence'] or 0:.3f}", f"pend {s['pending']}", 'trial' if s['pending_trial'] or s['trial'] else '', f"load {d['load']:.1f}", p or '')
