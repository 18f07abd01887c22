# ruff: noqa
"""The distribution of adaptive ÷ the better static: every run of this branch's adaptive (any seed) against the
statics of the same cell's base run (seed 1), and main's adaptive of that base run beside it."""
import glob, json, os, re, statistics as st, sys
tag = sys.argv[1] if len(sys.argv) > 1 else "new4"
def mean(doc, pol): return doc["policies"][pol]["summary"]["mean_e2e_s"]
def switches(doc):
    reg = doc["policies"]["adaptive"].get("learned", {}).get("regimes", {})
    return sum(v.get("switches", 0) for v in reg.values())
def share(doc):
    rs = doc["policies"]["adaptive"]["requests"]; return sum(r["backend"] == "speculative" for r in rs) / len(rs)
rows, mains, news = [], {}, {}
for f in sorted(glob.glob(f"/tmp/w37/runs/{tag}--*.json")):
    m = re.match(rf".*/{tag}--(.+)--(.+)--x(.+)--s(\d+)\.json", f)
    prof, w, scale, seed = m.groups()
    basef = f"/tmp/w37/runs/base--{prof}--{w}--x{scale}--s1.json"
    if not os.path.exists(basef): continue
    b, n = json.load(open(basef)), json.load(open(f))
    best = min(mean(b, "baseline"), mean(b, "speculative"))
    main = mean(b, "adaptive") / best
    new = mean(n, "adaptive") / best
    news[(prof, w, scale, seed)] = new
    mains[(prof, w, scale)] = main
    rows.append((prof, w, scale, seed, mean(b, "baseline"), mean(b, "speculative"), main if seed == "1" else None,
                 switches(b) if seed == "1" else None, new, switches(n), 100 * share(n)))
print("| profile | trace | scale | seed | baseline s | speculative s | main ÷ best (seed 1) | main switches | "
      "new ÷ best | new switches | new → spec % |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]:.3f} | {r[5]:.3f} | "
          f"{'' if r[6] is None else f'{r[6]:.3f}'} | {'' if r[7] is None else r[7]} | {r[8]:.3f} | {r[9]} | {r[10]:.0f} |")
def dist(label, xs):
    xs = sorted(xs)
    if not xs: return
    q = lambda p: xs[min(len(xs) - 1, int(p * len(xs)))]
    print(f"\n{label}: n={len(xs)}, median {st.median(xs):.3f}, p90 {q(0.9):.3f}, max {max(xs):.3f}, min {min(xs):.3f}, "
          f"> 1.05: {sum(x > 1.05 for x in xs)}, > 1.01: {sum(x > 1.01 for x in xs)}; sorted: {[round(x, 3) for x in xs]}")
fam = lambda k: k[1].startswith("bursty-")
dist("new, family", [v for k, v in news.items() if fam(k)])
dist("main, family (seed 1)", [v for k, v in mains.items() if fam(k)])
dist("new, built-ins", [v for k, v in news.items() if not fam(k)])
dist("main, built-ins (seed 1)", [v for k, v in mains.items() if not fam(k)])
paired = [(mains[k[:3]], v) for k, v in news.items() if k[3] == "1"]
print(f"\npaired seed-1 runs: {len(paired)}; new worse than main by > 1%: {sum(n > m * 1.01 for m, n in paired)}; "
      f"better by > 1%: {sum(n < m / 1.01 for m, n in paired)}")
