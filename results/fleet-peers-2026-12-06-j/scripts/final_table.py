"""The table of results/fleet-peers-2026-12-06-j from raw/*.json.gz (TAG--WINDOW--sS.json.gz)."""
import glob, gzip, json, os, re, statistics as st, sys

D = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), 'raw')
BR = sys.argv[2] if len(sys.argv) > 2 else 'branch'
STATIC = {  # best same-size static fleet, results/peers-2026-12-05 (08:22-09:01 UTC, 2026-12-05)
    'azure-code-a': (0.229, '4 x spec'), 'azure-code-burst': (0.409, '4 x spec'), 'azure-conv-a': (1.263, '4 x base'),
    'azure-conv-b-x2': (0.664, '4 x base'), 'mooncake-a': (3.511, '4 x base'), 'mooncake-b': (3.858, '4 x base')}
PEER = {'azure-code-a': 'sglang', 'azure-code-burst': 'vllm ca', 'azure-conv-a': 'vllm ca', 'azure-conv-b-x2': 'sglang',
        'mooncake-a': 'sglang', 'mooncake-b': 'sglang'}
runs = {}
for p in glob.glob(D + '/*.json*'):
    m = re.match(r'(.+?)--(.+?)--s(\d+)\.json', os.path.basename(p))
    if not m:
        continue
    tag, w, s = m.groups()
    j = json.load((gzip.open if p.endswith('.gz') else open)(p, 'rt'))
    for pol, v in j['policies'].items():
        reqs = v.get('requests') or []
        spec = sum(r.get('backend') == 'speculative' for r in reqs) / max(len(reqs), 1)
        runs.setdefault((tag, w), {})[int(s)] = (v['summary']['mean_e2e_s'], spec, v['summary']['mean_ttft_s'],
                                                 v['summary']['errors'])


def cell(tag, w, seeds):
    got = runs.get((tag, w), {})
    vals = [got[s][0] for s in seeds if s in got]
    return vals, (st.median(vals) if vals else None)


def f(x, n=3):
    return '–' if x is None else f'{x:.{n}f}'


print('| cell | main s1, s2, s3 | branch s1, s2, s3 | branch ÷ main (s1-2 med; s3) | → spec % (branch) | TTFT (branch, s) '
      '| best static: 2026-12-05; today | ÷ static (s1-2; s3); ÷ today’s static | best peer s1, s2, s3 (med) | ÷ peer (s1-2; s3; all-3 med ÷ peer med) |')
print('|' + '---|' * 10)
for w in STATIC:
    mv, _ = cell('main', w, (1, 2, 3)); m12 = cell('main', w, (1, 2))[1]; m3 = cell('main', w, (3,))[1]
    bv, _ = cell(BR, w, (1, 2, 3)); b12 = cell(BR, w, (1, 2))[1]; b3 = cell(BR, w, (3,))[1]; ball = cell(BR, w, (1, 2, 3))[1]
    pv, pmed = cell('peer', w, (1, 2, 3))
    sv, sname = STATIC[w]
    todays = [(cell(t, w, (1,))[1], t) for t in ('static', 'static4s', 'static4b') if cell(t, w, (1,))[1] is not None]
    today = min(todays)[0] if todays else None
    tname = {'static': sname, 'static4s': '4 x spec', 'static4b': '4 x base'}[min(todays)[1]] if todays else ''
    got = runs.get((BR, w), {})
    spec = ', '.join(f'{got[s][1] * 100:.0f}' for s in sorted(got))
    ttft = ', '.join(f'{got[s][2]:.3f}' for s in sorted(got))
    r = lambda a, b: None if a is None or b is None else a / b
    print(f"| {w} | {', '.join(f(x) for x in mv)} | {', '.join(f(x) for x in bv)} | {f(r(b12, m12))}; {f(r(b3, m3))} "
          f"| {spec} | {ttft} | {sv} ({sname}); {f(today)} ({tname}) | {f(r(b12, sv))}; {f(r(b3, sv))} ; {f(r(b12, today))}, {f(r(b3, today))} "
          f"| {', '.join(f(x) for x in pv)} ({f(pmed)}, {PEER[w]}) | {f(r(b12, pmed))}; {f(r(b3, pmed))}; {f(r(ball, pmed))} |")
errs = sum(v[3] for d in runs.values() for v in d.values())
print(f'\nerrors over all runs: {errs}')
