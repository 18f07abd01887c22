"""Which earlier occurrence does vLLM 0.26's n-gram proposer copy from? Replay the n-gram server's own greedy texts
(real BPE) with the earliest-occurrence rule (gateway.core.shadow_lookup) and with the emulator's most-recent rule
(gateway.emulator.drafter.NgramProposer), nmin 2 and 1; compare with the server's own tokens / chunks per request."""
import gzip, json, statistics, sys
from pathlib import Path
from tokenizers import Tokenizer
from gateway.core.shadow_lookup import LookupConfig, replay
from gateway.emulator.drafter import NgramProposer
RUN = Path("deploy/gpu/results/2026-12-05-trained")
DATA = Path(sys.argv[1])
prompts = {p["id"]: p for p in map(json.loads, (DATA / "prompts.jsonl").read_text().splitlines())}
bpe = Tokenizer.from_file(str(DATA / "tokenizer" / "tokenizer.json"))
rows = [json.loads(l) for l in gzip.decompress((RUN / "requests.jsonl.gz").read_bytes()).splitlines()]
def recent(prompt, out, nmin, k=4):
    prop = NgramProposer(prompt, nmin, 4); pos = 0; steps = 0
    first = True
    while pos < len(out):
        if first:  # the prefill step emits one token
            prop.observe(out[:1]); pos, steps, first = 1, 1, False; continue
        d = prop.propose(min(k, len(out) - pos))
        a = 0
        while a < len(d) and d[a] == out[pos + a]: a += 1
        n = min(a + 1, len(out) - pos); prop.observe(out[pos:pos + n]); pos += n; steps += 1
    return len(out) / max(steps, 1)
err = {"earliest2": [], "recent2": [], "recent1": []}
for r in rows:
    if r.get("label") != "ngram" or "error" in r or r["id"] not in prompts or not r.get("chunks"): continue
    p = [str(i) for i in bpe.encode(prompts[r["id"]]["prompt"], add_special_tokens=False).ids]
    o = [str(i) for i in bpe.encode(r["text"], add_special_tokens=False).ids]
    own = r["tokens"] / r["chunks"]
    e = replay(p, o, LookupConfig(k=4, nmin=2, nmax=4, max_prompt_tokens=1 << 20, max_output_tokens=1 << 20)).tokens_per_step
    for key, v in (("earliest2", e), ("recent2", recent(p, o, 2)), ("recent1", recent(p, o, 1))):
        err[key].append(abs(v / own - 1))
for k, v in err.items():
    v.sort(); print(k, "n", len(v), "median |err| %.4f p90 %.4f exact(<0.5%%) %d" % (statistics.median(v), v[9 * len(v) // 10], sum(x < 0.005 for x in v)))
