# ruff: noqa  -- a quick analysis script, kept as it ran
import sys, datetime as dt
from glog import load
P = 2.3e-5
for path in sys.argv[1:]:
    rs = load(path)
    def ts(r): return dt.datetime.fromisoformat(r['time'].replace('Z', '+00:00')).timestamp()
    t0 = min(ts(r) - r['observed_s'] for r in rs)
    for r in rs: r['sent'] = ts(r) - r['observed_s'] - t0
    rs.sort(key=lambda r: r['sent'])
    insts = sorted({r['instance'] for r in rs})
    backlog = {i: 0.0 for i in insts}; t = 0.0
    regret = 0.0; regret_short = 0.0; n = 0; same = 0
    by = {}
    for r in rs:
        dtt = r['sent'] - t; t = r['sent']
        for i in insts: backlog[i] = max(backlog[i] - dtt / P, 0.0)
        mn = min(backlog.values()); mine = backlog[r['instance']]
        reg = (mine - mn) * P
        regret += reg; n += reg > 0.01; same += mine <= mn + 1
        own = r['prompt_tokens'] - r.get('cached_tokens', 0)
        k = 'short<5k' if own < 5000 else ('mid<20k' if own < 20000 else 'long')
        by.setdefault(k, [0, 0.0]); by[k][0] += 1; by[k][1] += reg
        backlog[r['instance']] += own
    print(path[-45:], 'JSW regret (s of wait, fluid) %.1f' % regret, 'requests with regret>10ms', n, 'at min backlog', same, {k: (v[0], round(v[1], 1)) for k, v in by.items()})
