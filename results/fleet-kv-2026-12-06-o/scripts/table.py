# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per window and seed: each arm's runs (mean e2e, mean TTFT, median prediction error, share to speculation), their
means, and the arm's mean e2e / main's. Arms by tag prefix: `main*` and the others given (e.g. kv2 kv3)."""
import gzip, json, sys, os, glob, re, statistics as st

d, arms = sys.argv[1], sys.argv[2:]
runs = {}
for f in sorted(glob.glob(os.path.join(d, "*.json")) + glob.glob(os.path.join(d, "*.json.gz"))):
    m = re.match(r"([a-z0-9]+)--(.+)--s(\d)\.json", os.path.basename(f))
    # repeats carry a digit after `main` or a letter after `kvN`: main2 -> main, kv2b -> kv2 (mainm15, kvx15 stay)
    tag, window, seed = re.sub(r"^main\d$", "main", re.sub(r"^(kv\d)[b-d]$", r"\1", m.group(1))), m.group(2), int(m.group(3))
    try:
        p = json.load(gzip.open(f, "rt") if f.endswith(".gz") else open(f))["policies"]["adaptive"]
    except Exception:
        continue
    s = p["summary"]
    runs.setdefault((window, seed), {}).setdefault(tag, []).append(
        (s["mean_e2e_s"], s["mean_ttft_s"], p["prediction"]["median_error_ratio"], s["routed"].get("speculative", 0) / s["requests"]))
print("| window | seed | arm | runs: mean e2e (s) | mean | ÷ main | TTFT mean | pred. err (median of runs) | → spec |")
print("|---|---|---|---|---|---|---|---|---|")
for (w, seed), by in sorted(runs.items()):
    base = st.mean(r[0] for r in by.get("main", [(float("nan"),) * 4]))
    for arm in ["main", *arms]:
        rs = by.get(arm)
        if not rs:
            continue
        e2e = st.mean(r[0] for r in rs)
        print(f"| {w} | {seed} | {arm} | {', '.join(f'{r[0]:.3f}' for r in rs)} | {e2e:.3f} | {e2e / base:.3f} | "
              f"{st.mean(r[1] for r in rs):.3f} | {st.median(r[2] for r in rs):.3f} | {st.mean(r[3] for r in rs):.2f} |")
