# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per run: by backend role and by class: n, sum TTFT, sum decode (e2e - ttft), mean tokens, tokens/step."""
import gzip, json, sys, os, collections
for p in sys.argv[1:]:
    op = gzip.open if p.endswith(".gz") else open
    j = json.load(op(p))
    for name, v in j["policies"].items():
        reqs = [r for r in v["requests"] if r.get("e2e_s") is not None]
        print(f"== {os.path.basename(p)} {name}  n={len(reqs)} mean e2e {sum(r['e2e_s'] for r in reqs)/len(reqs):.4f}")
        for key in ("backend", "class"):
            g = collections.defaultdict(list)
            for r in reqs: g[r.get(key)].append(r)
            for k, rs in sorted(g.items(), key=lambda kv: str(kv[0])):
                tt = sum(r["ttft_s"] or 0 for r in rs); e = sum(r["e2e_s"] for r in rs)
                tok = sum(r["completion_tokens"] or 0 for r in rs); steps = sum(r.get("engine_steps") or 0 for r in rs)
                print(f"   {key:7s} {str(k):14s} n {len(rs):4d} ttft {tt:7.2f} decode {e-tt:7.2f} e2e {e:7.2f} tok {tok:6d} tok/step {tok/max(steps,1):.2f}")
