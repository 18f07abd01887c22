# ruff: noqa
"""Per-window adaptive vs statics on the same requests, from one bench JSON (adaptive repeat #k optional)."""
import json, sys, statistics as st
d = json.load(open(sys.argv[1])); w = float(sys.argv[2]) if len(sys.argv) > 2 else 5.0
pol = d["policies"]
def by_id(name, rep=None):
    return {r["id"]: r for r in pol[name]["requests"] if rep is None or r.get("repeat", 0) == rep}
base, spec = by_id("baseline"), by_id("speculative")
reps = sorted({r.get("repeat", 0) for r in pol["adaptive"]["requests"]})
for rep in reps:
    ad = by_id("adaptive", rep)
    ids = sorted(ad, key=lambda i: ad[i]["sent_s"])
    tot = {k: sum(x[i]["e2e_s"] for i in ids) for k, x in (("a", ad), ("b", base), ("s", spec))}
    print(f"repeat {rep}: adaptive {tot['a']/len(ids):.3f} base {tot['b']/len(ids):.3f} spec {tot['s']/len(ids):.3f} "
          f"-> {tot['a']/min(tot['b'],tot['s']):.3f}x better static")
    rows = {}
    for i in ids:
        k = int(ad[i]["sent_s"] // w); rows.setdefault(k, []).append(i)
    prev = None
    for k, g in sorted(rows.items()):
        sw = []
        for i in g:
            b = ad[i]["backend"]
            if "regime" in ad[i]["reason"] and b != prev:
                sw.append(f"{prev}->{b}@{ad[i]['sent_s']:.1f}")
            if "regime" in ad[i]["reason"] or "predicted" in ad[i]["reason"]:
                prev = b if "regime" in ad[i]["reason"] else prev
        m = lambda x: st.mean(x[i]["e2e_s"] for i in g)
        print(f"{k*w:5.0f}-{(k+1)*w:3.0f}s n={len(g):3d} spec={sum(ad[i]['backend']=='speculative' for i in g):3d} "
              f"A={m(ad):.2f} B={m(base):.2f} S={m(spec):.2f} {' '.join(sw)}")
