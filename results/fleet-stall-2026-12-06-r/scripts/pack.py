# ruff: noqa  -- a quick analysis script, kept as it ran
# raw/TAG.json.gz (bench JSON without the per-second true_load) and raw/TAG-logs/*.log.gz (the gateway's request lines)
import glob, gzip, json, os, sys
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for f in sorted(glob.glob('runs/*.json')):
    tag = os.path.basename(f)[:-5]
    d = json.load(open(f))
    for v in d['policies'].values():
        v.pop('true_load', None)
    with gzip.open(os.path.join(out, tag + '.json.gz'), 'wt') as g:
        json.dump(d, g)
    for lg in sorted(glob.glob(f'runs/{tag}-logs/*.log')):
        lines = [l for l in open(lg) if '"event":"request"' in l]
        with gzip.open(os.path.join(out, f'{tag}--{os.path.basename(lg)}.gz'), 'wt') as g:
            g.writelines(lines)
