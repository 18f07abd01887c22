# ruff: noqa  -- a quick analysis script, kept as it ran
"""Mooncake cells at merged main: per policy, per repeat, mean TTFT, mean e2e, prefix hit rate; TTFT ÷ least_loaded."""
import json, statistics as st, sys
for cell in sys.argv[1:]:
    doc = json.load(open(f"{cell}.json"))
    res = {}
    for pol, p in doc["policies"].items():
        by = {}
        for r in p["requests"]:
            by.setdefault(r.get("repeat", 1), []).append(r)
        rows = []
        for i, rep in enumerate(sorted(by)):
            rs = by[rep]; ok = [r for r in rs if r.get("status") == "200" and r.get("ttft_s") is not None]
            em = p["emulator"][i] if i < len(p.get("emulator", [])) else {}
            hits = sum(v.get("prefix_cache_hits", 0) for v in em.values()); q = sum(v.get("prefix_cache_queries", 0) for v in em.values())
            rows.append((st.mean(r["ttft_s"] for r in ok), st.mean(r["e2e_s"] for r in ok), hits / q if q else float("nan"), len(rs) - len(ok)))
        res[pol] = rows
    ll = st.median(r[0] for r in res["least_loaded"])
    for pol, rows in res.items():
        print(f"| {cell} | {pol} | " + ", ".join(f"{r[0]:.3f}" for r in rows) + " | " + ", ".join(f"{r[1]:.3f}" for r in rows)
              + " | " + ", ".join(f"{r[2]:.3f}" for r in rows) + f" | {st.median(r[0] for r in rows) / ll:.3f} | {sum(r[3] for r in rows)} |")
