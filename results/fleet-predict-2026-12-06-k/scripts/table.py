# ruff: noqa  -- a quick analysis script, kept as it ran
"""One line per run: median prediction error, mean e2e, TTFT, share to speculative; then branch / main per window.

usage: table.py RAW_DIR [TAG ...]     (files TAG--WINDOW--sS.json[.gz])
"""
import gzip, json, os, re, statistics as st, sys, collections

d, tags = sys.argv[1], sys.argv[2:]
runs = {}
for f in sorted(os.listdir(d)):
    m = re.match(r"(.+?)--(.+?)--s(\d+)\.json(\.gz)?$", f)
    if not m or (tags and m.group(1) not in tags):
        continue
    op = gzip.open if f.endswith(".gz") else open
    doc = json.load(op(os.path.join(d, f), "rt"))
    p = doc["policies"].get("adaptive")
    if p is None:
        continue
    s = p["summary"]
    runs[(m.group(1), m.group(2), int(m.group(3)))] = dict(
        err=p["prediction"]["median_error_ratio"], e2e=s["mean_e2e_s"], ttft=s["mean_ttft_s"], errors=s["errors"],
        spec=s["routed"].get("speculative", 0) / max(s["requests"], 1),
        stall=p.get("learned", {}).get("learner", {}).get("decode_stall_share"))
print("| tag | window | seed | median pred. error | mean e2e (s) | mean TTFT (s) | → spec | errors | stall share (b, s) |")
print("|---|---|---|---|---|---|---|---|---|")
for (t, w, s), r in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0], kv[0][2])):
    stall = "" if not r["stall"] else f"{r['stall']['baseline']:.3f}, {r['stall']['speculative']:.3f}"
    print(f"| {t} | {w} | {s} | {r['err']:.3f} | {r['e2e']:.4f} | {r['ttft']:.4f} | {r['spec']:.0%} | {r['errors']} | {stall} |")
windows = sorted({w for _, w, _ in runs})
alltags = sorted({t for t, _, _ in runs})
if "main" in alltags:
    print()
    print("| tag ÷ main | window | e2e s1-2 (med) | e2e s3 | error main s1-2 → tag s1-2 (med) | error s3 main → tag |")
    print("|---|---|---|---|---|---|")
    for t in alltags:
        if t == "main":
            continue
        for w in windows:
            def g(tag, seeds, k):
                xs = [runs[(tag, w, s)][k] for s in seeds if (tag, w, s) in runs]
                return st.median(xs) if xs else None
            a, b = g(t, (1, 2), "e2e"), g("main", (1, 2), "e2e")
            a3, b3 = g(t, (3,), "e2e"), g("main", (3,), "e2e")
            if a is None or b is None:
                continue
            r3 = f"{a3 / b3:.3f}" if a3 and b3 else "–"
            e3 = f"{g('main', (3,), 'err'):.3f} → {g(t, (3,), 'err'):.3f}" if a3 and b3 else "–"
            print(f"| {t} | {w} | {a / b:.3f} | {r3} | {g('main', (1, 2), 'err'):.3f} → {g(t, (1, 2), 'err'):.3f} | {e3} |")
