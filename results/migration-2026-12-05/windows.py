"""Per-window hindsight bound and regime switch cost from `specgate bench` output.

    python windows.py W-on.json 10                 # a run with baseline, speculative and adaptive
    python windows.py W-free.json 10 W-on.json     # an adaptive-only run, the statics from another file

Bound: the better static server per window of sent time (from the static runs; the carried queue is ignored, so
it is a bound, not a reachable figure), over the better static server for the whole trace. Switch cost: per switch
of the adaptive regime (a change of the regime_* reason), the requests sent in the 5 s after it, adaptive's
latency minus the static server it switched to on the same requests, as a share of the better static's total.
"""

from __future__ import annotations

import collections
import gzip
import json
import sys
from typing import Any


def load(path: str) -> dict[str, Any]:
    opener: Any = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return dict(json.load(f))


def by_repeat(doc: dict[str, Any], policies: dict[str, Any], name: str) -> list[dict[str, dict[str, Any]]]:
    reqs = policies[name]["requests"]
    n = len(reqs) // doc["repeat"]
    return [{x["id"]: x for x in reqs[r * n:(r + 1) * n]} for r in range(doc["repeat"])]


def switches(reqs: list[dict[str, Any]]) -> list[tuple[float, str]]:
    prev, out = "regime_baseline", []
    for x in reqs:
        token = x["reason"].split()[0]
        if token.startswith("regime_") and token != prev:
            out.append((x["sent_s"], token.removeprefix("regime_")))
            prev = token
    return out


def main(path: str, window_s: float, statics: str | None) -> None:
    doc = load(path)
    pol = doc["policies"] if statics is None else {**load(statics)["policies"], **doc["policies"]}
    base, spec, adapt = (by_repeat(doc, pol, p) for p in ("baseline", "speculative", "adaptive"))
    for r in range(doc["repeat"]):
        win: dict[int, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
        for rid, b in base[r].items():
            w = int(b["sent_s"] // window_s)
            win[w][0] += b["e2e_s"]
            win[w][1] += spec[r][rid]["e2e_s"]
        total = min(sum(v[0] for v in win.values()), sum(v[1] for v in win.values()))
        bound = sum(min(v) for v in win.values()) / total
        ratio = sum(a["e2e_s"] for a in adapt[r].values()) / total
        reqs = sorted(adapt[r].values(), key=lambda x: x["sent_s"])
        costs = []
        for t0, to in switches(reqs):
            ref = spec[r] if to == "speculative" else base[r]
            ids = [x["id"] for x in reqs if t0 <= x["sent_s"] < t0 + 5.0]
            cost = sum(adapt[r][i]["e2e_s"] - ref[i]["e2e_s"] for i in ids)
            costs.append(f"{t0:.1f}s->{to} n={len(ids)} {100 * cost / total:+.2f}%")
        print(f"repeat {r}: adaptive {ratio:.3f}x the better static; per-{window_s:g}s-window bound {bound:.3f}x; "
              f"switches: {'; '.join(costs) or 'none'}")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 10.0, sys.argv[3] if len(sys.argv) > 3 else None)
