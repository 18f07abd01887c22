"""Per window of send time: adaptive against each static on the same requests, its share to speculation, and the
mix ratio its decisions' reasons carried.

    python results/shadow-2026-12-05-e/win.py BASELINE.json SPECULATIVE.json ADAPTIVE.json [WINDOW_S]
"""
from __future__ import annotations

import collections
import json
import re
import sys
from typing import Any


def load(path: str) -> dict[str, dict[str, Any]]:
    with open(path) as f:
        pol = next(iter(json.load(f)["policies"].values()))
    return {r["id"]: r for r in pol["requests"]}


def main() -> None:
    b, s, a = (load(p) for p in sys.argv[1:4])
    width = float(sys.argv[4]) if len(sys.argv) > 4 else 5.0
    win: dict[int, list[Any]] = collections.defaultdict(lambda: [0, 0, 0.0, 0.0, 0.0, []])
    for rid, r in a.items():
        x = win[int(r["sent_s"] // width)]
        x[0] += 1
        x[1] += r["backend"] == "speculative"
        x[2] += r["e2e_s"]
        x[3] += b[rid]["e2e_s"]
        x[4] += s[rid]["e2e_s"]
        m = re.search(r"mix ([0-9.]+)x", r.get("reason", ""))
        if m:
            x[5].append(float(m.group(1)))
    print("window s | requests | to spec | adaptive | baseline | speculative | adaptive - better (s) | mix")
    total = 0.0
    for w in sorted(win):
        n, spec, ta, tb, ts, mix = win[w]
        d = ta - min(tb, ts)
        total += d
        mixes = f"{min(mix):.2f}-{max(mix):.2f}" if mix else "-"
        print(f"{w * width:5.0f} | {n} | {spec} | {ta / n:.2f} | {tb / n:.2f} | {ts / n:.2f} | {d:+.1f} | {mixes}")
    print(f"total {total:+.1f} s")


if __name__ == "__main__":
    main()
