# ruff: noqa  -- a quick analysis script, kept as it ran
"""Observed decode seconds / predicted, per role, by prompt size and load; per-step time observed vs implied."""
import json, sys, collections
for p in sys.argv[1:]:
    rows = [json.loads(l) for l in open(p) if '"event":"request"' in l]
    print("==", p.split("/")[-2])
    g = collections.defaultdict(lambda: [0, 0.0, 0.0, 0, 0])
    for r in rows:
        if not r.get("predicted_s") or not r.get("ttft_s"): continue
        pd = r["predicted_s"] - r["predicted_ttft_s"]; od = r["observed_s"] - r["ttft_s"]
        pt = r["prompt_tokens"]; pb = "<4k" if pt < 4000 else "<16k" if pt < 16000 else ">=16k"
        lb = int(min(r.get("load_self", 0), 9) // 3) * 3
        for key in ((r["backend"], "all"), (r["backend"], "prompt " + pb), (r["backend"], f"load {lb}+")):
            a = g[key]; a[0] += 1; a[1] += pd; a[2] += od; a[3] += r.get("engine_steps") or 0; a[4] += r.get("completion_tokens") or 0
    for k in sorted(g):
        n, pd, od, steps, tok = g[k]
        print(f"  {k[0]:12s} {k[1]:12s} n {n:4d} pred dec {pd:7.1f} obs {od:7.1f} obs/pred {od/max(pd,1e-9):.2f}  s/step obs {od/max(steps,1)*1000:.1f} ms")
