# ruff: noqa  -- a quick analysis script, kept as it ran
# per-seed mean e2e of each policy / peer in bench outputs
import json, sys, statistics as st, collections as C
for f in sys.argv[1:]:
    d = json.load(open(f))
    for pol, p in d['policies'].items():
        by = C.defaultdict(list)
        for r in p['requests']:
            if r.get('e2e_s') is not None and r.get('status') == '200':
                by[r.get('repeat', 0)].append(r['e2e_s'])
        means = [st.mean(v) for _, v in sorted(by.items())]
        errs = sum(1 for r in p['requests'] if r.get('status') != '200')
        print(f"{f.split('/')[-1][:-5]:45s} {pol:32s} " + " ".join(f"{m:.4f}" for m in means) + f"  median {st.median(means):.4f}" + (f" errors {errs}" if errs else ""))
