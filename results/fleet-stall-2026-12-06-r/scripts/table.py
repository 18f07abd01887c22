# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per window and seed (1-8, where run): each tag's mean e2e, mean TTFT, median prediction error, spec share, hit rate, and ÷ main.
python table.py RUNS_DIR TAG...   (files RUNS_DIR/TAG--WINDOW--sS.json[.gz]; the first TAG is the denominator)"""
import gzip, json, os, sys, statistics
d, tags = sys.argv[1], sys.argv[2:]
WINDOWS = ["mooncake-a", "m3", "mooncake-b", "azure-conv-a", "azure-code-a"]


def load(tag, w, s):
    for ext in (".json", ".json.gz"):
        p = os.path.join(d, f"{tag}--{w}--s{s}{ext}")
        if os.path.exists(p):
            return json.load((gzip.open if ext.endswith("gz") else open)(p))
    return None


def stats(j, pol="adaptive"):
    v = j["policies"][pol]; sm = v["summary"]; reqs = v["requests"]
    hits = q = 0.0
    for em in v["emulator"]:
        for x in em.values():
            hits += x.get("prefix_cache_hits", 0); q += x.get("prefix_cache_queries", 0)
    spec = sum(r.get("backend") == "speculative" for r in reqs) / max(len(reqs), 1)
    return dict(e2e=sm["mean_e2e_s"], ttft=sm["mean_ttft_s"], perr=v["prediction"].get("median_error_ratio"),
                spec=spec, hit=hits / max(q, 1), err=sm["errors"])


print("| window | seed | tag | mean e2e | ÷ main | mean TTFT | ÷ main | pred. err | → spec | hit | errors |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for w in WINDOWS:
    ratios = {t: [] for t in tags}
    for s in range(1, 9):
        base = load(tags[0], w, s)
        b = stats(base) if base else None
        for t in tags:
            j = load(t, w, s)
            if not j:
                continue
            x = stats(j)
            re = x["e2e"] / b["e2e"] if b else float("nan"); rt = x["ttft"] / b["ttft"] if b else float("nan")
            ratios[t].append((re, rt, x["e2e"], x["ttft"]))
            print(f"| {w} | {s} | {t} | {x['e2e']:.4f} | {re:.3f} | {x['ttft']:.4f} | {rt:.3f} | {x['perr']:.3f} | "
                  f"{x['spec']:.2f} | {x['hit']:.3f} | {x['err']} |")
            if "least_loaded" in j["policies"]:
                ll = stats(j, "least_loaded")
                print(f"| {w} | {s} | {t}: least_loaded | {ll['e2e']:.4f} | | {ll['ttft']:.4f} | | | {ll['spec']:.2f} | {ll['hit']:.3f} | {ll['err']} |")
    for t in tags:
        r = ratios[t]
        if r:
            print(f"| {w} | mean | {t} | {statistics.mean(a[2] for a in r):.4f} | {statistics.mean(a[0] for a in r):.3f} | "
                  f"{statistics.mean(a[3] for a in r):.4f} | {statistics.mean(a[1] for a in r):.3f} | | | | |")
