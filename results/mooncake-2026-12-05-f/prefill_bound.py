"""How low can mean TTFT go on a Mooncake window, whatever the router? A prefill-only replay of the window's
arrivals through N FIFO servers (each prompt's prefill time from the emulator's own step model: `h200-ngram`,
8192-token chunks, the emulator's ~6.1 characters a token; no prefix hits, no decode in the steps), routed by
least requests in flight (`least_loaded`, each request held for its prefill + 9 ms per output token) or to the
server whose prefill backlog ends first (join-the-shortest-work, JSW: the best a router that cannot reorder a
server's queue does for the request at hand). Prints each window's mean own prefill (the floor with no queueing),
both policies' mean TTFT and the ratios. Usage: python prefill_bound.py WORKLOAD.jsonl..."""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable

from gateway.emulator import profiles
from gateway.emulator.costs import SeqWork, forward_time

PROFILE = profiles.get_profile("h200-ngram")
CHARS_PER_TOKEN = 6.1  # the emulator's tokenizer on these windows' text (results/fleet-2026-12-05-d)
Request = tuple[float, float, float]  # arrival (s), own prefill (s), time in flight (s)


def prefill_s(tokens: int) -> float:
    t, done, chunk = 0.0, 0, PROFILE.max_num_batched_tokens
    while done < tokens:
        k = min(chunk, tokens - done)
        t += forward_time(PROFILE.target, PROFILE.gpu, [SeqWork(k, done + k)]) + PROFILE.step_overhead_s
        done += k
    return t


def requests(path: str) -> list[Request]:
    out = []
    with open(path) as f:
        for line in f:
            item = json.loads(line)
            chars = sum(len(m["content"]) for m in item["body"]["messages"])
            p = prefill_s(int(chars / CHARS_PER_TOKEN))
            out.append((item["t"], p, p + item["trace"]["output_tokens"] * 0.009))
    return out


def replay(reqs: list[Request], n: int, choose: Callable[[float, list[float], list[int]], int]) -> float:
    free, ends, ttft = [0.0] * n, [[] for _ in range(n)], []
    for t, p, held in reqs:
        i = choose(t, free, [sum(1 for e in ends[k] if e > t) for k in range(n)])
        free[i] = max(t, free[i]) + p
        ttft.append(free[i] - t)
        ends[i].append(t + held)
    return statistics.mean(ttft)


def main(paths: list[str]) -> None:
    print("| window | servers | mean own prefill (s) | least_loaded (s) | JSW (s) | JSW ÷ least_loaded "
          "| own ÷ least_loaded |")
    print("|---|---|---|---|---|---|---|")
    for path in paths:
        reqs = requests(path)
        own = statistics.mean(p for _, p, _ in reqs)
        for n in (4, 8):
            ll = replay(reqs, n, lambda t, free, loads: min(range(len(free)), key=lambda k: (loads[k], k)))
            jsw = replay(reqs, n, lambda t, free, loads: min(range(len(free)), key=lambda k: max(free[k] - t, 0.0)))
            name = path.rsplit("/", 1)[-1]
            print(f"| {name} | {n} | {own:.3f} | {ll:.3f} | {jsw:.3f} | {jsw / ll:.3f} | {own / ll:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
