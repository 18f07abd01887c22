# ruff: noqa  -- a quick analysis script, kept as it ran
import json, sys, collections
for p in sys.argv[1:]:
    c = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for l in open(p):
        d = json.loads(l)
        if d.get('event') != 'request' or not d.get('predicted_s'): continue
        L = 'lo' if d['load_self'] < 3 else 'hi'
        x = c[(d['backend'], L)]; x[0] += d['observed_s']; x[1] += d['predicted_s']; x[2] += 1
    print(p.split('/')[1][:45], ' '.join(f"{k[0][:4]}/{k[1]} {v[0]/v[1]:.3f}({v[2]})" for k, v in sorted(c.items())))
