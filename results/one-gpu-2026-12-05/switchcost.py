# ruff: noqa
"""Per logged switch of this branch's adaptive: its price (drain, cost, gain) against the measured excess over the
static server it moved to, on the requests sent in the 5 s after it (sim seconds)."""
import glob, json, re, sys
tag = sys.argv[1] if len(sys.argv) > 1 else "new4"
for f in sorted(glob.glob(f"/tmp/w37/runs/{tag}--*--s*.json")):
    m = re.match(rf".*/{tag}--(.+)--(.+)--x(.+)--s(\d+)\.json", f); prof, w, scale, seed = m.groups()
    try: b = json.load(open(f"/tmp/w37/runs/base--{prof}--{w}--x{scale}--s1.json"))
    except FileNotFoundError: continue
    n = json.load(open(f))
    ad = sorted(n["policies"]["adaptive"]["requests"], key=lambda r: r["sent_s"])
    st = {p: {r["id"]: r["e2e_s"] for r in b["policies"][p]["requests"]} for p in ("baseline", "speculative")}
    log = f.replace(".json", "-logs/gateway-adaptive.log")
    for line in open(log):
        if '"regime_switch"' not in line: continue
        e = json.loads(line); k = e["decisions"]
        if k <= 2 or e["price"] is None: continue
        t = ad[min(k, len(ad) - 1)]["sent_s"]
        win = [r for r in ad if t <= r["sent_s"] < t + 5]
        excess = sum(r["e2e_s"] - st[e["to"]][r["id"]] for r in win)
        p = e["price"]; kind = "free" if p["drain_s"] <= 0.3 else "paid"
        print(f"{prof} {w} s{seed}: t={t:.1f}s to {e['to']} {kind} drain {p['drain_s']:.2f} cost {p['cost_s']:.2f} "
              f"gain {p['gain_s']:.2f} | measured excess over static {e['to']} in 5 s: {excess:.2f} s ({len(win)} req)")
