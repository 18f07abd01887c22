# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per run: mean e2e, TTFT, spec share, pred error, prefix hit rate. python tab.py FILES..."""
import gzip, json, sys, os
for p in sys.argv[1:]:
    op = gzip.open if p.endswith(".gz") else open
    try:
        j = json.load(op(p))
    except Exception as e:
        print(p, "ERR", e); continue
    for name, v in j["policies"].items():
        sm = v["summary"]; reqs = v["requests"]
        spec = sum(r.get("backend") == "speculative" for r in reqs) / max(len(reqs), 1)
        hits = q = 0.0
        for em in v["emulator"]:
            for s in em.values():
                hits += s.get("prefix_cache_hits", 0); q += s.get("prefix_cache_queries", 0)
        pe = v["prediction"].get("median_error_ratio")
        print(f"{os.path.basename(p)[:60]:60s} {name[:28]:28s} e2e {sm['mean_e2e_s']:.4f} ttft {sm['mean_ttft_s']:.4f} "
              f"spec {spec:.2f} err {sm['errors']} perr {pe} hit {hits / max(q, 1):.3f}")
