"""How much prefix reuse a window of the Mooncake conversation trace offers a fleet of emulated servers.

Each row's `hash_ids` name its prompt's 512-token blocks (a block's id covers everything before it, as the trace
defines them). For a window replayed from cold caches: the share of prompt tokens whose leading blocks an
earlier request of the window already sent (`unbounded`: one cache of unlimited size seeing everything), and
what four servers' LRU caches of the emulated H200's size (24,709 blocks of 16 tokens, `vllm:cache_config_info`)
can hold of it under a router that sends each request where its longest cached prefix is (`best server`; a match
of the first block alone, which every prompt shares, counts as none; ties to the least prompt tokens sent) or
round robin. Also the gap between a conversation's turns.

    python results/fleet-2026-12-05-d/mooncake_reuse.py /work/wt/traces/mooncake_conversation_trace.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import OrderedDict

BLOCK = 512
CAPACITY = 24709 * 16 // BLOCK  # the emulated server's KV cache in 512-token blocks


def reuse(rows: list[dict], start: float, seconds: float, servers: int, policy: str, capacity: float) -> float:
    caches: list[OrderedDict[tuple[int, ...], None]] = [OrderedDict() for _ in range(servers)]
    sent = [0] * servers
    hit = total = turn = 0
    for r in rows:
        if not start <= r["timestamp"] / 1000 < start + seconds:
            continue
        keys = [tuple(r["hash_ids"][:i + 1]) for i in range(len(r["hash_ids"]))]

        def held(c: OrderedDict[tuple[int, ...], None], keys: list[tuple[int, ...]] = keys) -> int:
            k = 0
            while k < len(keys) and keys[k] in c:
                k += 1
            return k

        if policy == "round robin":
            s = turn % servers
            turn += 1
        else:  # a match of more than the first block (shared by every prompt), else the least prompt tokens sent
            s = max(range(servers), key=lambda i: (max(held(caches[i]), 1), -sent[i]))
        sent[s] += r["input_length"]
        hit += min(held(caches[s]) * BLOCK, r["input_length"])
        total += r["input_length"]
        for k in keys:
            caches[s][k] = None
            caches[s].move_to_end(k)
        while len(caches[s]) > capacity:
            caches[s].popitem(last=False)
    return hit / total if total else 0.0


def turn_gaps(rows: list[dict]) -> list[float]:
    last: dict[tuple[int, ...], float] = {}
    gaps = []
    for r in rows:
        h, t = r["hash_ids"], r["timestamp"] / 1000
        for i in range(len(h), 1, -1):
            if tuple(h[:i]) in last:
                gaps.append(t - last[tuple(h[:i])])
                break
        for i in range(1, len(h) + 1):
            last[tuple(h[:i])] = t
    return sorted(gaps)


def main(path: str) -> None:
    with open(path) as f:
        rows = [json.loads(line) for line in f]
    gaps = turn_gaps(rows)
    print(f"turns that extend an earlier prompt: {len(gaps)} of {len(rows)}; gap to it (s), "
          f"p10/p25/p50/p75/p90: " + "/".join(f"{gaps[int(q * len(gaps))]:.0f}" for q in (.1, .25, .5, .75, .9)))
    print("| window (start s, seconds) | unbounded, 1 cache | 4 servers, best server | 4 servers, round robin "
          "| 8 servers, best server |")
    print("|---|---|---|---|---|")
    for start, seconds in ((0, 60), (2356, 60), (1200, 60), (3000, 60), (0, 300), (1200, 300), (0, 600)):
        row = [reuse(rows, start, seconds, 1, "best server", float("inf")),
               reuse(rows, start, seconds, 4, "best server", CAPACITY),
               reuse(rows, start, seconds, 4, "round robin", CAPACITY),
               reuse(rows, start, seconds, 8, "best server", CAPACITY)]
        print(f"| {start}, {seconds} | " + " | ".join(f"{x:.3f}" for x in row) + " |")


if __name__ == "__main__":
    main(sys.argv[1])
