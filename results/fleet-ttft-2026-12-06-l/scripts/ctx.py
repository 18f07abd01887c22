# ruff: noqa  -- a quick analysis script, kept as it ran
import sys, datetime as dt
from glog import load
path = sys.argv[1]; rs = load(path)
def ts(r): return dt.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp()
t0 = min(ts(r) - r['observed_s'] for r in rs)
for r in rs:
    r['sent'] = ts(r) - r['observed_s'] - t0; r['first'] = r['sent'] + r['ttft_s']; r['end'] = ts(r) - t0
worst = sorted([r for r in rs if r.get('queued_tokens', 0) == 0], key=lambda r: r['predicted_ttft_s'] - r['ttft_s'])[:int(sys.argv[2])]
for w in worst:
    print(f"== {w['id']} {w['instance']} sent {w['sent']:.2f} ttft {w['ttft_s']:.2f} pred {w['predicted_ttft_s']:.2f} own {w['prompt_tokens']-w.get('cached_tokens',0)} load {w['load_self']:.1f}")
    for r in sorted(rs, key=lambda r: r['sent']):
        if r['instance'] == w['instance'] and r['sent'] < w['sent'] + 0.5 and r['end'] > w['sent'] - 0.01 and r is not w:
            print(f"    {r['id']} sent {r['sent']:.2f} first {r['first']:.2f} end {r['end']:.2f} own {r['prompt_tokens']-r.get('cached_tokens',0)} queued {r.get('queued_tokens',0)} pred_ttft {r['predicted_ttft_s']:.2f}")
