"""Which earlier occurrence does vLLM 0.26's n-gram proposer copy from? Replay the n-gram server's own texts of the
H200 run (real BPE ids) with the earliest-occurrence rule (gateway.core.shadow_lookup) and with the most-recent rule
the emulator had (prompt_lookup_min 2 and 1); compare with the server's own tokens / chunks per request.

    PYTHONPATH=. python results/emulator-ngram-2026-12-05-e/rulecheck.py deploy/gpu/train/out/data
(needs `tokenizers`, and the data rebuilt by `bash deploy/gpu/train/run_train_and_measure.sh pack`)."""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from tokenizers import Tokenizer

from gateway.core.shadow_lookup import LookupConfig, replay

RUN = Path("deploy/gpu/results/2026-12-05-trained")
WHOLE = LookupConfig(k=4, nmin=2, nmax=4, max_prompt_tokens=1 << 20, max_output_tokens=1 << 20)


class MostRecent:
    """The emulator's proposer before 2026-12-05 e: the most recent earlier occurrence of the longest suffix."""

    def __init__(self, context: Sequence[str], nmin: int) -> None:
        self.ctx, self.sizes = list(context), list(range(4, nmin - 1, -1))

    def propose(self, k: int) -> list[str]:
        for n in self.sizes:
            suffix = self.ctx[-n:]
            for end in range(len(self.ctx) - 1, n - 1, -1):
                if self.ctx[end - n : end] == suffix:
                    return self.ctx[end : end + k]
        return []


def most_recent(prompt: list[str], out: list[str], nmin: int, k: int = 4) -> float:
    """Tokens per step of the most-recent rule replayed on `out` (the first token is the prefill's)."""
    prop = MostRecent([*prompt, *out[:1]], nmin)
    pos, steps = 1, 1
    while pos < len(out):
        drafts = prop.propose(min(k, len(out) - pos))
        accepted = 0
        while accepted < len(drafts) and drafts[accepted] == out[pos + accepted]:
            accepted += 1
        n = min(accepted + 1, len(out) - pos)
        prop.ctx.extend(out[pos : pos + n])
        pos, steps = pos + n, steps + 1
    return len(out) / steps


def main(data: Path) -> None:
    prompts = {p["id"]: p for p in map(json.loads, (data / "prompts.jsonl").read_text().splitlines())}
    bpe = Tokenizer.from_file(str(data / "tokenizer" / "tokenizer.json"))
    rows = [json.loads(line) for line in gzip.decompress((RUN / "requests.jsonl.gz").read_bytes()).splitlines()]
    err: dict[str, list[float]] = {"earliest, min 2": [], "most recent, min 2": [], "most recent, min 1": []}
    for r in rows:
        if r.get("label") != "ngram" or "error" in r or r["id"] not in prompts or not r.get("chunks"):
            continue
        p = [str(i) for i in bpe.encode(prompts[r["id"]]["prompt"], add_special_tokens=False).ids]
        o = [str(i) for i in bpe.encode(r["text"], add_special_tokens=False).ids]
        own = r["tokens"] / r["chunks"]
        reads = (replay(p, o, WHOLE).tokens_per_step, most_recent(p, o, 2), most_recent(p, o, 1))
        for key, value in zip(err, reads, strict=True):
            err[key].append(abs(value / own - 1))
    for key, v in err.items():
        v.sort()
        print(f"{key}: n {len(v)}, median |error| {statistics.median(v):.4f}, p90 {v[9 * len(v) // 10]:.4f}, "
              f"exact (< 0.5%) {sum(x < 0.005 for x in v)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
