# ruff: noqa  -- a quick analysis script, kept as it ran
"""shadowfid.py WORKLOAD: per kind, greedy requests: the emulator's n-gram tokens a step (offline, its own rule) against
the gateway's shadow replay of the same reference, with the shadow's prompt window as shipped and unbounded."""
import json, sys, collections, statistics
from gateway.emulator.drafter import offline_tokens_per_step
from gateway.core.shadow_lookup import replay_text, LookupConfig
rows = collections.defaultdict(list)
big = LookupConfig(max_prompt_tokens=10**7, max_output_tokens=10**7)
for l in open(sys.argv[1]):
    r = json.loads(l); b = r["body"]
    if b.get("temperature", 1.0) > 0.05: continue
    prompt = "\n".join(m["content"] for m in b["messages"]) if "messages" in b else b["prompt"]
    em = offline_tokens_per_step("h200-ngram", prompt, r["reference"], 0.0)
    sh = replay_text(prompt, r["reference"], LookupConfig()).tokens_per_step
    sb = replay_text(prompt, r["reference"], big).tokens_per_step
    rows[r["kind"]].append((em, sh, sb, len(prompt.split())))
print("| kind | n | emulator tok/step | shadow (4096) | shadow (unbounded) | gain ratio em/shadow | em/unbounded |")
for k, v in sorted(rows.items()):
    em = statistics.mean(x[0] for x in v); sh = statistics.mean(x[1] for x in v); sb = statistics.mean(x[2] for x in v)
    print(f"| {k} | {len(v)} | {em:.3f} | {sh:.3f} | {sb:.3f} | {(em-1)/max(sh-1,1e-9):.2f} | {(em-1)/max(sb-1,1e-9):.2f} |")
