# ruff: noqa
"""results/one-gpu-2026-12-05/runs.json: one row per run of this branch's adaptive, with the same cell's statics and
main's adaptive (seed 1), and every regime switch the gateway logged (with its price)."""
import glob, json, os, re, sys
tag, out = sys.argv[1], sys.argv[2]
def mean(doc, pol): return round(doc["policies"][pol]["summary"]["mean_e2e_s"], 4)
def share(doc):
    rs = doc["policies"]["adaptive"]["requests"]; return round(sum(r["backend"] == "speculative" for r in rs) / len(rs), 3)
def switches(path):
    log = path.replace(".json", "-logs/gateway-adaptive.log")
    if not os.path.exists(log): return None
    return [{k: e[k] for k in ("to", "ratio", "decisions", "price")} for e in map(json.loads, open(log))
            if e.get("event") == "regime_switch"]
rows = []
for f in sorted(glob.glob(f"/tmp/w37/runs/{tag}--*.json")):
    prof, w, scale, seed = re.match(rf".*/{tag}--(.+)--(.+)--x(.+)--s(\d+)\.json", f).groups()
    basef = f"/tmp/w37/runs/base--{prof}--{w}--x{scale}--s1.json"
    if not os.path.exists(basef): continue
    b, n = json.load(open(basef)), json.load(open(f))
    best = min(mean(b, "baseline"), mean(b, "speculative"))
    rows.append({"profile": prof, "trace": w, "time_scale": float(scale), "seed": int(seed),
                 "requests": len(n["policies"]["adaptive"]["requests"]),
                 "baseline_s": mean(b, "baseline"), "speculative_s": mean(b, "speculative"),
                 "main_adaptive_s": mean(b, "adaptive") if seed == "1" else None,
                 "main_vs_best": round(mean(b, "adaptive") / best, 4) if seed == "1" else None,
                 "main_to_speculative": share(b) if seed == "1" else None,
                 "new_adaptive_s": mean(n, "adaptive"), "new_vs_best": round(mean(n, "adaptive") / best, 4),
                 "new_to_speculative": share(n), "new_switches": switches(f)})
json.dump(rows, open(out, "w"), indent=1)
print(len(rows), "rows")
