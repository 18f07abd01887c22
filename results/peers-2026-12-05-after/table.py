"""The before/after table of README.md from cells/*.json.gz (adaptive's runs) and the peers' and static fleets'
numbers of results/peers-2026-12-05/README.md (same emulated 2 + 2 fleet, same windows: not re-run).

    python results/peers-2026-12-05-after/table.py
"""

from __future__ import annotations

import gzip
import json
import statistics
from pathlib import Path

HERE = Path(__file__).parent
# window: (best static, its fleet, best peer, its name, adaptive's two seeds in the peers README)
PEERS = {
    "azure-code-a": (0.229, "4 × spec", 0.231, "sglang", (0.244, 0.244)),
    "azure-code-burst": (0.409, "4 × spec", 0.402, "vllm cache_aware", (0.411, 0.416)),
    "azure-conv-a": (1.263, "4 × base", 1.406, "vllm cache_aware", (1.336, 1.344)),
    "azure-conv-b-x2": (0.664, "4 × base", 0.746, "sglang", (0.751, 0.765)),
    "mooncake-a": (3.511, "4 × base", 3.618, "sglang", (3.686, 3.993)),
    "mooncake-b": (3.858, "4 × base", 3.959, "sglang", (4.105, 4.480)),
}


def runs(name: str) -> tuple[list[float], list[float], float] | None:
    path = HERE / "cells" / f"{name}.json.gz"
    if not path.exists():
        return None
    a = json.loads(gzip.decompress(path.read_bytes()))["policies"]["adaptive"]
    means = [r["mean_e2e_s"] for r in a["runs"]]
    shares = [100 * r["speculative_share"] for r in a["runs"]]
    return means, shares, a["summary"]["mean_ttft_s"]


def main() -> None:
    print("| cell | best static | best peer | before: adaptive (seeds) | ÷ static | ÷ peer | today's main, pre-change"
          " (seeds) | after (seeds) | → spec % | mean TTFT (s) | **after ÷ best static** | **after ÷ best peer** |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for w, (static, sname, peer, pname, before) in PEERS.items():
        b = statistics.median(before)
        pre = runs(f"before--{w}")
        post = runs(f"after--{w}")
        pre_text = ", ".join(f"{m:.3f}" for m in pre[0]) if pre else "not run"
        if post is None:
            print(f"| {w} | {static:.3f} ({sname}) | {peer:.3f} ({pname}) | {before[0]:.3f}, {before[1]:.3f} | "
                  f"{b / static:.3f} | {b / peer:.3f} | {pre_text} | not run | | | | |")
            continue
        m = statistics.median(post[0])
        print(f"| {w} | {static:.3f} ({sname}) | {peer:.3f} ({pname}) | {before[0]:.3f}, {before[1]:.3f} | "
              f"{b / static:.3f} | {b / peer:.3f} | {pre_text} | {', '.join(f'{x:.3f}' for x in post[0])} | "
              f"{', '.join(f'{x:.0f}' for x in post[1])} | {post[2]:.3f} | **{m / static:.3f}** | **{m / peer:.3f}** |")


if __name__ == "__main__":
    main()
