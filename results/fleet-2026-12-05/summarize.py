"""Summarize the `specgate bench` JSONs of this folder's runs into the README's tables (prints markdown).

Usage: python results/fleet-2026-12-05/summarize.py results/fleet-2026-12-05/raw
"""

from __future__ import annotations

import gzip
import json
import statistics
import sys
from pathlib import Path
from typing import Any

CELLS = [("multi-turn-chat", "1+1", "mt-11"), ("multi-turn-chat", "2+2", "mt-22"), ("bursty", "1+1", "bursty-11"),
         ("bursty", "2+2", "bursty-22"), ("structured-heavy", "1+1", "sh-11")]
ONE_GPU = [("mixed-phases", "1gpu-phases"), ("bursty", "1gpu-bursty")]


def load(path: Path) -> dict[str, Any]:
    """A bench JSON's policies, from `path` or `path` + `.gz`."""
    if path.exists():
        return json.loads(path.read_text())["policies"]
    gz = path.with_name(path.name + ".gz")
    return json.loads(gzip.decompress(gz.read_bytes()))["policies"] if gz.exists() else {}


def hit_rate(policy: dict[str, Any]) -> float | None:
    hits = queries = 0.0
    for run in policy.get("emulator", []):
        for server in run.values():
            hits += server.get("prefix_cache_hits", 0.0)
            queries += server.get("prefix_cache_queries", 0.0)
    return round(hits / queries, 3) if queries else None


def runs(policy: dict[str, Any]) -> list[float]:
    return sorted(r["mean_e2e_s"] for r in policy.get("runs", [])) or [policy["summary"]["mean_e2e_s"]]


def fleet_table(folder: Path) -> str:
    out = ["| workload | fleet | best static fleet (s) | least_loaded (s) | adaptive before (s, runs) | adaptive after "
           "(s, runs) | before ÷ best static | after ÷ best static | after ÷ before | prefix hit rate: best static / "
           "least_loaded / before / after | pred. error median: before / after |", "|" + "---|" * 11]
    for workload, fleet, stem in CELLS:
        statics, before, after = (load(folder / f"{stem}-{k}.json") for k in ("statics", "before", "after"))
        if not statics or not before or not after:
            continue
        names = [n for n in statics if "@" in n]
        best = min(names, key=lambda n: statics[n]["summary"]["mean_e2e_s"])
        b = statics[best]["summary"]["mean_e2e_s"]
        rb, ra = runs(before["adaptive"]), runs(after["adaptive"])
        mb, ma = statistics.median(rb), statistics.median(ra)
        ll = statics["least_loaded"]
        out.append(
            f"| {workload} | {fleet} | {b:.3f} ({best.split('@')[1]}) | {ll['summary']['mean_e2e_s']:.3f} | "
            f"{mb:.3f} {rb} | {ma:.3f} {ra} | {mb / b:.3f} | {ma / b:.3f} | {ma / mb:.3f} | "
            f"{hit_rate(statics[best])} / {hit_rate(ll)} / {hit_rate(before['adaptive'])} / "
            f"{hit_rate(after['adaptive'])} | {before['adaptive']['prediction']['median_error_ratio']} / "
            f"{after['adaptive']['prediction']['median_error_ratio']} |")
    return "\n".join(out)


def one_gpu_table(folder: Path) -> str:
    out = ["| workload (one GPU, h200-ngram pair) | baseline (s) | speculative (s) | adaptive before (s, runs) | "
           "adaptive after (s, runs) | after ÷ before | pred. error median: before / after |", "|" + "---|" * 7]
    for workload, stem in ONE_GPU:
        statics, before, after = (load(folder / f"{stem}-{k}.json") for k in ("statics", "before", "after"))
        if not statics or not before or not after:
            continue
        rb, ra = runs(before["adaptive"]), runs(after["adaptive"])
        mb, ma = statistics.median(rb), statistics.median(ra)
        out.append(
            f"| {workload} | {statics['baseline']['summary']['mean_e2e_s']:.3f} | "
            f"{statics['speculative']['summary']['mean_e2e_s']:.3f} | {mb:.3f} {rb} | {ma:.3f} {ra} | {ma / mb:.3f} | "
            f"{before['adaptive']['prediction']['median_error_ratio']} / "
            f"{after['adaptive']['prediction']['median_error_ratio']} |")
    return "\n".join(out)


if __name__ == "__main__":
    folder = Path(sys.argv[1])
    print(fleet_table(folder))
    print()
    print(one_gpu_table(folder))
