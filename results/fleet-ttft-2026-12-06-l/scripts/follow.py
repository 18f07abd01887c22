# ruff: noqa  -- a quick analysis script, kept as it ran
import sys, datetime as dt
from glog import load
P = 2.3e-5
for path in sys.argv[1:]:
    rs = load(path)
    def ts(r): return dt.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp()
    t0 = min(ts(r) - r['observed_s'] for r in rs)
    for r in rs:
        r['sent'] = ts(r) - r['observed_s'] - t0; r['first'] = r['sent'] + r['ttft_s']
    tot = 0.0; n = 0; tot_first = 0.0
    for r in rs:
        fol = [o for o in rs if o is not r and o['instance'] == r['instance'] and r['sent'] <= o['sent'] < r['first']]
        ahead = [o for o in rs if o is not r and o['instance'] == r['instance'] and o['sent'] < r['sent'] and o['first'] > r['sent']]
        if fol:
            n += 1
            extra = min(sum(o['prompt_tokens'] - o.get('cached_tokens', 0) for o in fol), 8192 * 1.5) * P
            tot += extra
            if not ahead: tot_first += extra
    print(path[-40:], 'requests with followers before their first token', n, 'est. added TTFT (<=1 budget step) %.1f s' % tot, 'of which with nothing ahead %.1f' % tot_first, 'mean ttft', sum(r['ttft_s'] for r in rs) / len(rs))
