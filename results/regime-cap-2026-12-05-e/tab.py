"""adaptive ÷ the better static per cell and tag. Usage: python tab.py [DIR] (default: raw/ beside this file)."""
import glob, gzip, json, os, statistics, sys
ev = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'raw')
def mean(path, pol):
    try: d = json.load(gzip.open(path + '.gz') if os.path.exists(path + '.gz') else open(path))
    except Exception: return None
    p = d['policies'].get(pol)
    if not p: return None
    runs = p['runs']; return statistics.median(r['mean_e2e_s'] for r in runs), statistics.median(r.get('speculative_share', 0) for r in runs)
keys = sorted({os.path.basename(f).split('--', 1)[1].removesuffix('.gz').removesuffix('.json') for f in glob.glob(f'{ev}/*.json*')})
tags = sorted({os.path.basename(f).split('--', 1)[0] for f in glob.glob(f'{ev}/*.json*')} - {'B', 'S'})
print('key', 'B', 'S', *tags)
ratios = {t: [] for t in tags}
for k in keys:
    b = mean(f'{ev}/B--{k}.json', 'baseline'); s = mean(f'{ev}/S--{k}.json', 'speculative')
    if not b or not s: continue
    best = min(b[0], s[0]); row = [k, f'{b[0]:.3f}', f'{s[0]:.3f}']
    for t in tags:
        a = mean(f'{ev}/{t}--{k}.json', 'adaptive')
        if a: ratios[t].append(a[0] / best); row.append(f'{a[0]/best:.3f} ({a[1]:.0%})')
        else: row.append('-')
    print(*row)
for t, r in ratios.items():
    if r: print(t, 'n', len(r), 'median %.3f worst %.3f >1.05: %d >1.01: %d' % (statistics.median(r), max(r), sum(x > 1.05 for x in r), sum(x > 1.01 for x in r)))
