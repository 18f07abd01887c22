# ruff: noqa  -- an analysis script, kept as it ran
"""Per request of the jsonl windows: class/features as the gateway sees them + true tps offline (emulator physics)."""
import json, sys, gzip
from gateway.core.protocol import request_view
from gateway.core.classify import features, classify, ClassifierConfig, temperature_bucket
from gateway.emulator.drafter import offline_tokens_per_step
from gateway.emulator.wire import chat_prompt
from gateway.emulator.text import tokenize
from gateway.settings import Settings
s = Settings()
cfg = s.classifier_config() if hasattr(s, "classifier_config") else None
out = []
for w in sys.argv[1:]:
    for line in open(f"runs/{w}.jsonl"):
        r = json.loads(line)
        b = r["body"]
        ep = r["endpoint"]; v = request_view(ep, b)
        f = features(v, cfg)
        prompt = chat_prompt(b["messages"]) if "messages" in b else b["prompt"]
        ref = r.get("reference") or ""
        tps = offline_tokens_per_step("h200-ngram", prompt, ref, float(b.get("temperature", 1.0)))
        out.append(dict(w=w, id=r["id"], kind=r.get("kind"), cls=classify(f, cfg), bucket=temperature_bucket(f.temperature),
                        temp=f.temperature, ptok=f.prompt_tokens, max_tokens=f.max_tokens, copy=f.copy_source,
                        out=len(tokenize(ref)) + 1, tps=tps, last=(b["messages"][-1]["content"] if "messages" in b else b["prompt"])[-400:],
                        prompt=prompt))
import os; json.dump(out, gzip.open(os.environ.get("DS", "runs/h/dataset.json.gz"), "wt"))
print(len(out))
