# ruff: noqa  -- an analysis script
"""Per request of a jsonl window: prompt tokens and the n-gram server's per-step token counts (emulator physics)."""
import json, sys, gzip
from gateway.emulator.drafter import Speculation, request_seed
from gateway.emulator.profiles import get_profile
from gateway.emulator.target import target_output
from gateway.emulator.wire import chat_prompt
from gateway.emulator.text import tokenize
from gateway.core.migration import not_movable
prof = get_profile("h200-ngram")
out = {}
for w in sys.argv[1:]:
    rows = {}
    for line in open(f"runs/{w}.jsonl"):
        r = json.loads(line); b = r["body"]
        prompt = chat_prompt(b["messages"]) if "messages" in b else b["prompt"]
        ref = r.get("reference")
        pt = tokenize(prompt)
        mt = b.get("max_tokens") or b.get("max_completion_tokens")
        seed = request_seed(prompt, ref)
        tgt = target_output(pt, ref, mt, False, seed).tokens
        temp = float(b.get("temperature", 1.0))
        spec = Speculation(prof, pt, temp, seed)
        spec.observe(tgt[:1]); pos = 1; steps = []
        while pos < len(tgt):
            d = spec.propose(len(tgt) - pos)
            n = len(spec.verify(d, tgt, pos).tokens); pos += n; steps.append(n)
        rows[r["id"]] = dict(P=len(pt), L=len(tgt), steps=steps, temp=temp, kind=r.get("kind"),
                             fmt=(b.get("response_format") or {}).get("type"), nm=not_movable("messages" in b, b))
    out[w] = rows
    print(w, len(rows), file=sys.stderr)
json.dump(out, gzip.open("runs/i/traj.json.gz", "wt"))
