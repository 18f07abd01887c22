"""Per policy of `specgate bench` output files: mean end-to-end and TTFT per run, the prefix hit rate
(`vllm:prefix_cache_hits / vllm:prefix_cache_queries` summed over the emulated servers) per run, and
where the requests went. Usage: python summarize.py FILE.json[.gz] ..."""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from collections import Counter
from typing import Any


def load(path: str) -> dict[str, Any]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def runs(policy: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per run: mean e2e, mean TTFT, prefix hit rate, requests per instance."""
    reqs = policy["requests"]
    repeats = sorted({r.get("repeat", 1) for r in reqs})
    out = []
    for i, em in enumerate(policy["emulator"]):
        chunk = [r for r in reqs if r.get("repeat", 1) == repeats[i]] if len(repeats) > 1 else reqs
        ok = [r for r in chunk if str(r.get("status")) == "200"]
        hits = sum(s.get("prefix_cache_hits", 0) for s in em.values())
        queries = sum(s.get("prefix_cache_queries", 0) for s in em.values())
        out.append({
            "e2e": statistics.fmean(r["e2e_s"] for r in ok) if ok else float("nan"),
            "ttft": statistics.fmean(r["ttft_s"] for r in ok if r.get("ttft_s") is not None) if ok else float("nan"),
            "hit": hits / queries if queries else float("nan"),
            "errors": len(chunk) - len(ok),
            "per_instance": dict(sorted(Counter(r.get("instance") for r in chunk).items())),
        })
    return out


def load_range(folder: str, tag: str, workload: str, fleet: str) -> str:
    """The 1-minute load averages `uptime` said at the start and end of each bench of a cell ("2.4–3.9")."""
    try:
        with open(f"{folder}/{tag}--{workload}--{fleet}.uptime") as f:
            loads = [float(line.split("load average: ")[1].split(",")[0]) for line in f if "load average" in line]
    except OSError:
        return "-"
    return f"{min(loads):.1f}–{max(loads):.1f}" if loads else "-"


def main(paths: list[str]) -> None:
    for path in paths:
        d = load(path)
        for name, pol in d["policies"].items():
            for i, r in enumerate(runs(pol)):
                print(f"{path.split('/')[-1]:40s} {name:28s} run{i + 1} e2e {r['e2e']:.3f} ttft {r['ttft']:.3f} "
                      f"hit {r['hit']:.3f} err {r['errors']} {r['per_instance']}")


if __name__ == "__main__":
    main(sys.argv[1:])
