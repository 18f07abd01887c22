"""A cell's windows: adaptive (TAG) against each static on the same requests. Usage: python win.py KEY TAG [SECONDS]
(KEY like h200-ngram--bursty-202--x1--s1; files in raw/ beside this file)."""

from __future__ import annotations

import collections
import gzip
import json
import os
import sys

EV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "raw")


def requests(tag: str, key: str, pol: str) -> dict[str, dict[str, object]]:
    with gzip.open(f"{EV}/{tag}--{key}.json.gz") as fh:
        d = json.load(fh)
    return {r["id"]: r for r in d["policies"][pol]["requests"]}


def main(key: str, tag: str, width: float) -> None:
    b, s, a = requests("B", key, "baseline"), requests("S", key, "speculative"), requests(tag, key, "adaptive")
    win: dict[int, list[float]] = collections.defaultdict(lambda: [0.0] * 5)
    for i, r in a.items():
        x = win[int(float(r["sent_s"]) // width)]  # type: ignore[arg-type]
        x[0] += 1
        x[1] += r["backend"] == "speculative"
        x[2] += float(r["e2e_s"])  # type: ignore[arg-type]
        x[3] += float(b[i]["e2e_s"])  # type: ignore[arg-type]
        x[4] += float(s[i]["e2e_s"])  # type: ignore[arg-type]
    for w in sorted(win):
        n, sp, ad, ba, sv = win[w]
        print(f"{w * width:5.0f}s n={n:3.0f} spec={sp:3.0f} A={ad / n:.2f} B={ba / n:.2f} S={sv / n:.2f} "
              f"dA={ad - min(ba, sv):+6.1f}s")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 5.0)
