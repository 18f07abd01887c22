# ruff: noqa  -- a quick analysis script, kept as it ran
"""m3: each tag's mean TTFT ÷ least_loaded's, against the pooled least_loaded runs (its policy reads no estimates, so
every arm's least_loaded run is a sample of the same thing). python ttft_ll.py RUNS_DIR TAG..."""
import glob, json, os, statistics, sys
d, tags = sys.argv[1], sys.argv[2:]
ll = []
for p in sorted(glob.glob(os.path.join(d, "*--m3--s*.json"))):
    j = json.load(open(p))
    if "least_loaded" in j["policies"]:
        ll.append((os.path.basename(p), j["policies"]["least_loaded"]["summary"]["mean_ttft_s"]))
den = statistics.mean(v for _, v in ll)
print("least_loaded runs:", ", ".join(f"{n.split('--')[0]} {v:.4f}" for n, v in ll), f"mean {den:.4f}")
for t in tags:
    xs = []
    for s in range(1, 9):
        p = os.path.join(d, f"{t}--m3--s{s}.json")
        if os.path.exists(p):
            xs.append(json.load(open(p))["policies"]["adaptive"]["summary"]["mean_ttft_s"])
    if xs:
        print(f"{t}: seeds {len(xs)} TTFT " + ", ".join(f"{x:.4f}" for x in xs) + f" mean {statistics.mean(xs):.4f}"
              f" ÷ least_loaded {statistics.mean(xs) / den:.3f} (seeds 1-3: {statistics.mean(xs[:3]) / den:.3f}; 1-5: {statistics.mean(xs[:5]) / den:.3f})")
