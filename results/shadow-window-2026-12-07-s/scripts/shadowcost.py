# ruff: noqa  -- a quick analysis script, kept as it ran
"""shadowcost.py WORKLOAD: CPU of one shadow replay of the long_context requests' references at prompt windows 4096..32768."""
import json, sys, time, statistics
from gateway.core.shadow_lookup import replay_text, LookupConfig, tokenize
reqs = [json.loads(l) for l in open(sys.argv[1])]
reqs = [r for r in reqs if r["kind"] in ("long_context", "extraction")]
for cap in (4096, 8192, 16384, 32768):
    cfg = LookupConfig(max_prompt_tokens=cap); ts = []
    for r in reqs:
        b = r["body"]; prompt = "\n".join(m["content"] for m in b["messages"])
        t = time.perf_counter(); replay_text(prompt, r["reference"], cfg); ts.append(time.perf_counter() - t)
    print(cap, f"median {statistics.median(ts)*1e3:.2f} ms, max {max(ts)*1e3:.2f} ms, n {len(ts)}, max prompt tokens {max(len(tokenize(chr(10).join(m['content'] for m in r['body']['messages']))) for r in reqs)}")
