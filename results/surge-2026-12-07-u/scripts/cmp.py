# ruff: noqa  -- a quick analysis script, kept as it ran
"""cmp.py TAG...: per cell (profile, workload, scale, seed) adaptive ÷ the better static (statics B, S of seed 1), one
column per tag, with the speculative share; then each tag's median, worst and count above 1.05 over the cells it has."""
import glob, json, os, statistics, sys
EV = "/tmp/l37f/ev"
tags = sys.argv[1:]
def run(path, pol):
    try:
        with open(path) as fh: return json.load(fh)["policies"][pol]["runs"][0]
    except (OSError, KeyError, ValueError): return None
keys = sorted({os.path.basename(p)[len(t) + 2:-5] for t in tags for p in glob.glob(f"{EV}/{t}--*.json")})
print("| cell | baseline s | speculative s | " + " | ".join(tags) + " |"); print("|---" * (len(tags) + 3) + "|")
vals = {t: [] for t in tags}; paired = {t: [] for t in tags}
for key in keys:
    base_key = key.rsplit("--s", 1)[0] + "--s1"
    b, s = run(f"{EV}/B--{base_key}.json", "baseline"), run(f"{EV}/S--{base_key}.json", "speculative")
    if not b or not s: continue
    best = min(b["mean_e2e_s"], s["mean_e2e_s"])
    row = []; have = {}
    for t in tags:
        r = run(f"{EV}/{t}--{key}.json", "adaptive")
        if r is None: row.append("-"); continue
        v = r["mean_e2e_s"] / best; vals[t].append(v); have[t] = v
        row.append(f"{v:.3f} ({100 * r.get('speculative_share', 0):.0f}%)")
    if len(have) == len(tags):
        for t in tags: paired[t].append(have[t])
    print(f"| {key} | {b['mean_e2e_s']:.3f} | {s['mean_e2e_s']:.3f} | " + " | ".join(row) + " |")
print()
for t in tags:
    v = vals[t]
    if v: print(f"- {t}: {len(v)} cells, median {statistics.median(v):.3f}, worst {max(v):.3f}, above 1.05: {sum(x > 1.05 for x in v)}")
n = len(paired[tags[0]])
if n: print(f"- cells all tags have ({n}): " + ", ".join(f"{t} median {statistics.median(paired[t]):.3f} worst {max(paired[t]):.3f}" for t in tags))
