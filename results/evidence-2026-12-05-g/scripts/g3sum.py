# ruff: noqa  -- a quick analysis script, kept as it ran
"""Every run of a tag, any seed, against the statics of seed 1: count, median, worst, above 1.05."""
import glob, json, os, statistics, sys
EV = "/tmp/l37f/ev"
tag = sys.argv[1]
r = []
for p in glob.glob(f"{EV}/{tag}--*.json"):
    key = os.path.basename(p)[len(tag) + 2:-5]
    base = key[:key.rindex("--s")] + "--s1"
    try:
        b = json.load(open(f"{EV}/B--{base}.json"))["policies"]["baseline"]["runs"][0]["mean_e2e_s"]
        s = json.load(open(f"{EV}/S--{base}.json"))["policies"]["speculative"]["runs"][0]["mean_e2e_s"]
    except FileNotFoundError:
        continue
    a = json.load(open(p))["policies"]["adaptive"]["runs"][0]["mean_e2e_s"]
    r.append((a / min(b, s), key))
r.sort()
x = [v for v, _ in r]
print(f"{tag}: {len(x)} runs, median {statistics.median(x):.3f}, worst {max(x):.3f} ({r[-1][1]}), above 1.05: {sum(v > 1.05 for v in x)}, above 1.01: {sum(v > 1.01 for v in x)}")
