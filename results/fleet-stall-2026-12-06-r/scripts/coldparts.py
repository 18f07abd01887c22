# ruff: noqa  -- a quick analysis script, kept as it ran
"""Where a decode's under-read comes from, by role and arrival third: Σ observed / Σ predicted of the output tokens,
the tokens per step (speculative) and the seconds per step (observed decode / steps against predicted decode /
predicted steps). python coldparts.py LOGDIR..."""
import json, os, sys
for d in sys.argv[1:]:
    rows = [json.loads(l) for l in open(os.path.join(d, "gateway-adaptive.log")) if '"event":"request"' in l]
    rows = [r for r in rows if r.get("predicted_s") and r.get("ttft_s") is not None and r.get("engine_steps")]
    ids = sorted(r["id"] for r in rows); pos = {i: k * 3 // len(ids) for k, i in enumerate(ids)}
    out = []
    for role in ("baseline", "speculative"):
        for t in range(3):
            rs = [r for r in rows if r["backend"] == role and pos[r["id"]] == t]
            if not rs: continue
            tok_o = sum(r["completion_tokens"] for r in rs); tok_p = sum(r["predicted_output_tokens"] for r in rs)
            tps_p = [r.get("predicted_tokens_per_step") or 1.0 for r in rs] if role == "speculative" else [1.0] * len(rs)
            steps_o = sum(r["engine_steps"] for r in rs)
            steps_p = sum(max(r["predicted_output_tokens"] - 1, 0) / max(tp, 1.0) for r, tp in zip(rs, tps_p))
            dec_o = sum(r["observed_s"] - r["ttft_s"] for r in rs); dec_p = sum(r["predicted_s"] - r["predicted_ttft_s"] for r in rs)
            out.append(f"{role[:4]} t{t} n{len(rs)} dec {dec_o / dec_p:.2f} tok {tok_o / tok_p:.2f} steps {steps_o / steps_p:.2f} s/step {(dec_o / steps_o) / (dec_p / steps_p):.2f}")
    print(os.path.basename(d)[:26]); print("   " + "\n   ".join(out))
