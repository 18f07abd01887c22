# ruff: noqa  -- a quick analysis script, kept as it ran
"""tables.py: sections 1 and 2 of the README from /tmp/l37f/ev (adaptive ÷ the better static of seed 1's statics,
with the share to the n-gram server)."""
import json, statistics
EV = "/tmp/l37f/ev"
def run(tag, prof, wl, scale, seed, pol):
    try:
        d = json.load(open(f"{EV}/{tag}--{prof}--{wl}--x{scale}--s{seed}.json"))
        return d["policies"][pol]["runs"][0]
    except (OSError, KeyError, ValueError):
        return None
def best(prof, wl, scale):
    b, s = run("B", prof, wl, scale, 1, "baseline"), run("S", prof, wl, scale, 1, "speculative")
    return (b["mean_e2e_s"], s["mean_e2e_s"]) if b and s else (None, None)
def cell(tag, prof, wl, scale, seed):
    b, s = best(prof, wl, scale); r = run(tag, prof, wl, scale, seed, "adaptive")
    if r is None or b is None: return None, "–"
    v = r["mean_e2e_s"] / min(b, s)
    return v, f"{v:.3f} ({100 * r.get('speculative_share', 0):.0f}%)"
print("| member | profile | scale | baseline s | n-gram s | adaptive ÷ better static (to n-gram) |\n|---|---|---|---|---|---|")
for prof, scale in (("h200-ngram", 1), ("h200-ngram-dynk", 1), ("h200-ngram", 4)):
    vals = []
    for n in range(1200, 1212):
        b, s = best(prof, f"bursty-{n}", scale)
        v, txt = cell("w1", prof, f"bursty-{n}", scale, 1)
        if v is None: continue
        vals.append(v); print(f"| {n} | {prof} | ×{scale} | {b:.3f} | {s:.3f} | {txt} |")
    if vals: print(f"| **{len(vals)} members** | {prof} | ×{scale} | | | median {statistics.median(vals):.3f}, worst {max(vals):.3f} |")
print()
tags = ("w9", "h5", "g0f", "lt1", "mf9")
print("| cell | baseline s | n-gram s | " + " | ".join(f"{t} s1" for t in tags) + " | w9 s2 | lt1 s2 |\n|---" * 1 + "|---" * (len(tags) + 4) + "|")
for wl in ["bursty-1", "bursty-1101", "bursty-901", "bursty-1106", "bursty-1102", "bursty-907", "bursty-815", "bursty-501",
           "bursty-510", "bursty-702", "bursty-1107", "bursty", "mixed-phases"]:
    b, s = best("h200-ngram", wl, 1)
    row = [cell(t, "h200-ngram", wl, 1, 1)[1] for t in tags] + [cell(t, "h200-ngram", wl, 1, 2)[1] for t in ("w9", "lt1")]
    print(f"| {wl} | {b:.3f} | {s:.3f} | " + " | ".join(row) + " |")
