# ruff: noqa  -- an analysis script, kept as it ran
# per request: adaptive vs clairvoyant (same workload): where they differ, by class, copy kind and placements
import json, sys, collections as C, statistics as st
def load(f):
    return {r['id']: r for r in (json.loads(l) for l in open(f) if '"event":"request"' in l)}
a = load(sys.argv[1]); c = load(sys.argv[2])
g = C.defaultdict(list)
for k in a:
    if k not in c: continue
    ra, rc = a[k], c[k]
    g[(ra['class'], ra.get('copy_kind'), ra['backend'][:4] + '/' + rc['backend'][:4])].append((ra['observed_s'], rc['observed_s'], ra['predicted_output_tokens'], ra['completion_tokens'], ra.get('predicted_tokens_per_step') or 0, rc.get('predicted_tokens_per_step') or 0))
tot = sum(len(v) for v in g.values())
print("class kind adaptive/clair n  sum(adapt-clair)/N  adapt clair  Opred Otrue  tps_a tps_true")
for k in sorted(g, key=lambda k: -sum(v[0] - v[1] for v in g[k])):
    x = g[k]
    print(k, len(x), f"{sum(v[0]-v[1] for v in x)/tot*1000:6.2f}ms {st.mean(v[0] for v in x):.3f} {st.mean(v[1] for v in x):.3f} {st.median(v[2] for v in x):6.1f} {st.median(v[3] for v in x):6.1f} {st.median(v[4] for v in x):.2f} {st.median(v[5] for v in x):.2f}")
