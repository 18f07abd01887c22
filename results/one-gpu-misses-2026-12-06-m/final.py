# ruff: noqa  -- a quick analysis script, kept as it ran
"""final.py NEW [MAINTAGS...]: per run of tag NEW, adaptive ÷ the better static (B/S seed 1) against main's run of the same
cell and seed (the first of MAINTAGS that has it), and the difference; then the summary over each set."""
import glob, json, os, statistics, sys
EV = "/tmp/l37f/ev"
new = sys.argv[1]; mains = sys.argv[2:] or ["c4", "f1", "g1", "k1"]
def run(path, pol):
    try:
        return json.load(open(path))["policies"][pol]["runs"][0]
    except (OSError, KeyError):
        return None
rows, ours, theirs = [], [], []
for path in sorted(glob.glob(f"{EV}/{new}--*.json")):
    key = os.path.basename(path)[len(new) + 2:-5]
    base = key.rsplit("--s", 1)[0] + "--s1"
    b, s = run(f"{EV}/B--{base}.json", "baseline"), run(f"{EV}/S--{base}.json", "speculative")
    if not b or not s:
        continue
    best = min(b["mean_e2e_s"], s["mean_e2e_s"])
    n = run(path, "adaptive")
    m, mt = None, "-"
    for t in mains:
        m = run(f"{EV}/{t}--{key}.json", "adaptive")
        if m:
            mt = t; break
    prof, wl, scale, seed = key.split("--")
    r = n["mean_e2e_s"] / best
    mr = m["mean_e2e_s"] / best if m else None
    ours.append(r)
    if mr: theirs.append(mr)
    rows.append(f"| {wl} | {scale[1:]} | {seed[1:]} | {b['mean_e2e_s']:.3f} | {s['mean_e2e_s']:.3f} | "
                f"{'-' if mr is None else f'{mr:.3f} ({mt})'} | {r:.3f} | {100 * n.get('speculative_share', 0):.0f}% | "
                f"{'-' if mr is None else f'{100 * (r / mr - 1):+.1f}%'} |")
print("| workload (h200-ngram) | scale | seed | baseline s | speculative s | main ÷ better | this ÷ better | to spec | change |")
print("|---|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
for name, r in (("main", theirs), (new, ours)):
    print(f"\n{name}: {len(r)} runs, median {statistics.median(r):.3f}, worst {max(r):.3f}, above 1.05: {sum(x > 1.05 for x in r)}")
