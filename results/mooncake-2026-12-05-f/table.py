"""Per window and fleet: adaptive's mean TTFT, e2e and prefix hit rate per seed, against least_loaded and vllm-router
`cache_aware` (per run), and the ratios on medians. Usage: python table.py DIR PREFIX (files PREFIX-<w>-<fleet>-A.json
for adaptive, -B.json for the yardsticks; .json or .json.gz). With --second-half: only requests sent in each window's
second half (the hit rate stays the whole run's). With --lead-in: the windows replayed with a lead-in, measured after
it."""

from __future__ import annotations

import glob
import gzip
import json
import os
import statistics
import sys
from typing import Any


def load(path: str) -> dict[str, Any]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def per_run(policy: dict[str, Any], after: float = 0.0) -> list[dict[str, float]]:
    """Per run: mean TTFT and e2e of the requests sent at `after` s or later, and the run's prefix hit rate."""
    out = []
    for i, emu in enumerate(policy["emulator"]):
        recs = [r for r in policy["requests"] if r.get("repeat", 1) == i + 1 and r["status"] == "200"
                and r["sent_s"] >= after]
        hits = sum(s.get("prefix_cache_hits", 0) for s in emu.values() if isinstance(s, dict))
        queries = sum(s.get("prefix_cache_queries", 0) for s in emu.values() if isinstance(s, dict))
        errors = sum(1 for r in policy["requests"] if r.get("repeat", 1) == i + 1 and r["status"] != "200")
        out.append({"ttft": statistics.mean(r["ttft_s"] for r in recs),
                    "e2e": statistics.mean(r["e2e_s"] for r in recs),
                    "hit": hits / max(queries, 1), "n": len(recs), "errors": errors})
    return out


def fmt(xs: list[float]) -> str:
    return ", ".join(f"{x:.3f}" for x in xs)


SECONDS = {"m1": 90, "m2": 120, "m3": 60, "m4": 90}  # the held-out windows' lengths (WINDOWS.md)
LEAD_IN = {"m3w": 120}  # a window replayed with a lead-in: only what is sent after it is measured (WINDOWS.md)


def main(folder: str, prefix: str, half: bool = False, lead_in: bool = False) -> None:
    print("| window | fleet | adaptive TTFT (s, seeds 1-3) | least_loaded TTFT (runs) | vllm-router ca TTFT (runs) "
          "| **TTFT ÷ least_loaded** | adaptive hit (seeds) | vllm-router ca hit | adaptive e2e (seeds) "
          "| least_loaded e2e | vllm-router ca e2e | e2e ÷ least_loaded / ÷ vllm ca | errors | load (uptime) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for a_path in sorted(glob.glob(f"{folder}/{prefix}-*-A.json*")):
        stem = os.path.basename(a_path).split(".json")[0][len(prefix) + 1:-2]
        w, fleet = stem.rsplit("-", 1)
        b_paths = glob.glob(f"{folder}/{prefix}-{stem}-B.json*")
        if lead_in != (w in LEAD_IN):
            continue
        after = LEAD_IN[w] if lead_in else SECONDS.get(w, 0) / 2 if half else 0.0
        ad = per_run(load(a_path)["policies"]["adaptive"], after)
        b = load(b_paths[0])["policies"] if b_paths else {}
        ll = per_run(b["least_loaded"], after) if "least_loaded" in b else []
        ca = per_run(b["vllm-router:cache_aware"], after) if "vllm-router:cache_aware" in b else []
        med = lambda rs, k: statistics.median(r[k] for r in rs)  # noqa: E731
        ratio = f"**{med(ad, 'ttft') / med(ll, 'ttft'):.3f}**" if ll else "-"
        e2e_ratio = (f"{med(ad, 'e2e') / med(ll, 'e2e'):.3f} / {med(ad, 'e2e') / med(ca, 'e2e'):.3f}"
                     if ll and ca else "-")
        errors = sum(r["errors"] for r in ad + ll + ca)
        up = []
        for tag in ("A", "B"):
            p = f"{folder}/{prefix}-{stem}-{tag}.uptime"
            if os.path.exists(p):
                with open(p) as f:
                    up += [line.split("load average:")[1].split(",")[0].strip() for line in f if "load" in line]
        print(f"| {w} | {fleet} | {fmt([r['ttft'] for r in ad])} | {fmt([r['ttft'] for r in ll])} | "
              f"{fmt([r['ttft'] for r in ca])} | {ratio} | {fmt([r['hit'] for r in ad])} | "
              f"{fmt([r['hit'] for r in ca])} | "
              f"{fmt([r['e2e'] for r in ad])} | {fmt([r['e2e'] for r in ll])} | {fmt([r['e2e'] for r in ca])} | "
              f"{e2e_ratio} | {errors} | {'–'.join(up)} |")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--second-half" in sys.argv, "--lead-in" in sys.argv)
