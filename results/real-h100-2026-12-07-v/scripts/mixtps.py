# ruff: noqa  -- a quick analysis script, kept as it ran
"""mixtps.py REQUESTS.jsonl[.gz] POLICY: the steps-weighted tokens a step (Σ tokens / Σ tokens ÷ predicted tokens a
step) of the last 64 requests decided by each time, read from the decisions' reasons (`at X tokens/step`): what the
mix's break-even batch would be computed from (the acceptance cap, not kept)."""
import gzip, json, re, sys
f, pol = sys.argv[1], sys.argv[2]
rs = [json.loads(l) for l in (gzip.open(f, "rt") if f.endswith(".gz") else open(f))]
rs = sorted((r for r in rs if r["policy"] == pol), key=lambda r: r["sent_at_s"])
for t in (4, 6, 8, 12, 16, 24):
    w = [r for r in rs if r["sent_at_s"] <= t][-64:]
    tok = steps = 0.0
    for r in w:
        tps = float(re.search(r"at ([0-9.]+) tokens/step", r["reason"]).group(1))
        tok += r["completion_tokens"]; steps += r["completion_tokens"] / max(tps, 1.0)
    print(f"t {t:3d} s: {len(w)} requests, {tok / steps:.2f} tokens a step")
