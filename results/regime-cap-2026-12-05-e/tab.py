"""adaptive ÷ the better static per cell and tag. Usage: python tab.py [DIR] (default: raw/ beside this file)."""

from __future__ import annotations

import glob
import gzip
import json
import os
import statistics
import sys

EV = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "raw")


def mean(path: str, pol: str) -> tuple[float, float] | None:
    """Median over runs of (mean end-to-end s, share to speculation) of `pol` in a bench file, or None."""
    try:
        if os.path.exists(path + ".gz"):
            with gzip.open(path + ".gz") as fh:
                d = json.load(fh)
        else:
            with open(path) as fh:
                d = json.load(fh)
    except (OSError, ValueError):
        return None
    p = d["policies"].get(pol)
    if not p:
        return None
    runs = p["runs"]
    return (statistics.median(r["mean_e2e_s"] for r in runs),
            statistics.median(r.get("speculative_share", 0) for r in runs))


def key_of(f: str) -> str:
    return os.path.basename(f).split("--", 1)[1].removesuffix(".gz").removesuffix(".json")


def main() -> None:
    files = glob.glob(f"{EV}/*.json*")
    keys = sorted({key_of(f) for f in files if f.endswith((".json", ".json.gz"))})
    tags = sorted({os.path.basename(f).split("--", 1)[0] for f in files} - {"B", "S", "eB", "eS"})
    print("key", "B", "S", *tags)
    ratios: dict[str, list[float]] = {t: [] for t in tags}
    for k in keys:
        b, s = mean(f"{EV}/B--{k}.json", "baseline"), mean(f"{EV}/S--{k}.json", "speculative")
        if not b or not s:
            continue
        best = min(b[0], s[0])
        row = [k, f"{b[0]:.3f}", f"{s[0]:.3f}"]
        for t in tags:
            a = mean(f"{EV}/{t}--{k}.json", "adaptive")
            if a:
                ratios[t].append(a[0] / best)
                row.append(f"{a[0] / best:.3f} ({a[1]:.0%})")
            else:
                row.append("-")
        print(*row)
    for t, r in ratios.items():
        if r:
            print(t, "n", len(r), f"median {statistics.median(r):.3f} worst {max(r):.3f} "
                  f">1.05: {sum(x > 1.05 for x in r)} >1.01: {sum(x > 1.01 for x in r)}")


if __name__ == "__main__":
    main()
