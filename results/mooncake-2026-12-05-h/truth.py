"""The emulator's own prefill time per gateway token over a window's prompts (no cache, no queue): the truth the
learned prefill price is compared with. Usage: python truth.py WORKLOAD.jsonl"""

import json
import statistics
import sys

from gateway.emulator import profiles
from gateway.emulator.costs import SeqWork, forward_time
from gateway.emulator.text import tokenize

P = profiles.get_profile("h200-ngram")


def prefill_s(tokens: int) -> float:
    t, done, chunk = 0.0, 0, P.max_num_batched_tokens
    while done < tokens:
        k = min(chunk, tokens - done)
        t += forward_time(P.target, P.gpu, [SeqWork(k, done + k)]) + P.step_overhead_s
        done += k
    return t


def main(path: str) -> None:
    rows = []  # (gateway tokens, emulator tokens, own prefill s)
    with open(path) as f:
        for line in f:
            item = json.loads(line)
            text = "".join(m["content"] for m in item["body"]["messages"])
            em = min(len(tokenize(text)), 32768)  # the emulator's context limit
            rows.append((int(len(text) / 4.0) + 1, em, prefill_s(em)))
    gw = sum(r[0] for r in rows)
    print(f"requests {len(rows)}, gateway tokens per emulator token {gw / sum(r[1] for r in rows):.3f}")
    print(f"token-weighted s per gateway token {sum(r[2] for r in rows) / gw:.3g}")
    mean_ratio = statistics.mean(r[2] / r[0] for r in rows)
    inv = statistics.mean(1 / r[0] for r in rows)
    print(f"mean of per-request ratios {mean_ratio:.3g}; with 0.03 s fixed time {mean_ratio + 0.03 * inv:.3g}, "
          f"0.05 s {mean_ratio + 0.05 * inv:.3g}")
    for lo, hi in [(0, 2000), (2000, 8000), (8000, 16000), (16000, 32000), (32000, 10**6)]:
        sel = [r for r in rows if lo <= r[0] < hi]
        if sel:
            rate = sum(r[2] for r in sel) / sum(r[0] for r in sel)
            print(f"  {lo}-{hi} gateway tokens: {len(sel)} prompts, {rate:.3g}")


if __name__ == "__main__":
    main(sys.argv[1])
