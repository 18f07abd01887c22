# ruff: noqa  -- a quick analysis script, kept as it ran
"""From a gateway log: per backend role, predicted vs observed (e2e, TTFT, tokens/step, output tokens)."""
import json, sys, collections, statistics as st
for p in sys.argv[1:]:
    rows = [json.loads(l) for l in open(p) if '"event":"request"' in l]
    print("==", p.split("/")[-2], len(rows))
    g = collections.defaultdict(list)
    for r in rows: g[r["backend"]].append(r)
    for b, rs in sorted(g.items()):
        ps = sum(r.get("predicted_s") or 0 for r in rs); os_ = sum(r["observed_s"] for r in rs)
        pt = sum(r.get("predicted_ttft_s") or 0 for r in rs); ot = sum(r.get("ttft_s") or 0 for r in rs)
        tok = sum(r.get("completion_tokens") or 0 for r in rs); steps = sum(r.get("engine_steps") or 0 for r in rs)
        ptps = [r.get("predicted_tokens_per_step") for r in rs if r.get("predicted_tokens_per_step")]
        # token-weighted predicted tps
        wt = sum((r.get("predicted_tokens_per_step") or 1) * (r.get("completion_tokens") or 0) for r in rs) / max(tok, 1)
        po = sum(r.get("predicted_output_tokens") or 0 for r in rs)
        reasons = collections.Counter(r["reason"] for r in rs)
        print(f"  {b:12s} n {len(rs):4d} pred e2e {ps:7.1f} obs {os_:7.1f} | pred ttft {pt:6.1f} obs {ot:6.1f} | pred out {po:7.0f} obs {tok:6d} | tps pred(tok-w) {wt:.2f} obs {tok/max(steps,1):.2f} | {dict(reasons)}")
