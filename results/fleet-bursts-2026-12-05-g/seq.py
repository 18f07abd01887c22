# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, datetime as D
f = sys.argv[1]; lo, hi = float(sys.argv[2]), float(sys.argv[3])
rs = [json.loads(l) for l in open(f) if '"event":"request"' in l]
for r in rs:
    end = D.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp(); r['sent'] = end - r['observed_s']
t0 = min(r['sent'] for r in rs)
for r in sorted(rs, key=lambda r: r['sent']):
    t = r['sent'] - t0
    if lo <= t < hi:
        print(f"{t:7.3f} {r['backend'][:4]} P={r['prompt_tokens']:5d} O={r['completion_tokens']:4d} st={r['engine_steps']:4d} L={r['load_self']:5.1f} ttft {r['ttft_s']:.3f}/{r['predicted_ttft_s']:.3f} e2e {r['observed_s']:.3f}/{r['predicted_s']:.3f} r={r.get('ratio') or 0:.2f} {r['class'][:6]}")
