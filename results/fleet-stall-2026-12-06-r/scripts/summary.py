# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per window and arm: e2e and TTFT ÷ main per seed (same seed), their means, and the median prediction errors.
python summary.py RUNS_DIR BASE TAG..."""
import json, os, statistics, sys
d, base, tags = sys.argv[1], sys.argv[2], sys.argv[3:]
def get(t, w, s):
    p = os.path.join(d, f"{t}--{w}--s{s}.json")
    if not os.path.exists(p): return None
    v = json.load(open(p))["policies"]["adaptive"]
    return v["summary"]["mean_e2e_s"], v["summary"]["mean_ttft_s"], v["prediction"]["median_error_ratio"]
print("| window | arm | seeds | e2e ÷ main, per seed | mean | TTFT ÷ main, per seed | mean | pred. err (arm; main) |")
print("|---|---|---|---|---|---|---|---|")
for w in ["mooncake-a", "m3", "mooncake-b", "azure-conv-a", "azure-code-a"]:
    for t in tags:
        pairs = [(get(base, w, s), get(t, w, s)) for s in range(1, 9)]
        pairs = [(s + 1, b, x) for s, (b, x) in enumerate(pairs) if b and x]
        if not pairs: continue
        e = [x[0] / b[0] for _, b, x in pairs]; tt = [x[1] / b[1] for _, b, x in pairs]
        pe = statistics.median(x[2] for _, _, x in pairs); pb = statistics.median(b[2] for _, b, _ in pairs)
        print(f"| {w} | {t} | {','.join(str(s) for s, _, _ in pairs)} | {', '.join(f'{r:.3f}' for r in e)} | **{statistics.mean(e):.3f}** | "
              f"{', '.join(f'{r:.3f}' for r in tt)} | {statistics.mean(tt):.3f} | {pe:.3f}; {pb:.3f} |")
