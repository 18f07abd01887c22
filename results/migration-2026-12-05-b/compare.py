"""Migration off vs on, side by side, from `specgate bench` output in a runs folder (`run.sh` wrote it).

    python compare.py RUNS W [W ...]

Per workload W: `W-statics.json` (baseline and speculative, 2 repeats) and `W-{off,on}-s{1,2}.json` (adaptive,
seed 1 and 2, migration off / on, each with its `-logs/` folder). Ratio: adaptive's mean end-to-end latency ÷ the
better static server's (each static's mean over its 2 repeats). Switches: `regime_switch` events in the gateway's
log; moved: `specgate_migrations_total{reason="switch"}`. Switch cost: per switch (a change of the regime_* reason
in the requests, sorted by sent time), the requests sent in the 5 s after it, adaptive's latency minus the static
server it switched to on the same requests (their mean over the 2 repeats), as a share of the better static's total.
Bound: the better static per 10, 5 and 2 s window of sent time (hindsight, switches free, the carried queue
ignored), ÷ the better static.
"""

from __future__ import annotations

import collections
import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any


def load(path: Path) -> dict[str, Any]:
    return dict(json.loads(path.read_text()))


def per_request(doc: dict[str, Any], policy: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for x in doc["policies"][policy]["requests"]:
        out[x["id"]].append(x)
    return out


def switch_times(reqs: list[dict[str, Any]]) -> list[tuple[float, str]]:
    prev, out = None, []
    for x in sorted(reqs, key=lambda r: r["sent_s"]):
        token = x["reason"].split()[0]
        if token.startswith("regime_") and token != prev:
            if prev is not None:
                out.append((x["sent_s"], token.removeprefix("regime_")))
            prev = token
    return out


def main(runs: Path, workloads: list[str]) -> None:
    rows = []
    for w in workloads:
        st = load(runs / f"{w}-statics.json")
        statics = {p: {rid: statistics.mean(x["e2e_s"] for x in xs) for rid, xs in per_request(st, p).items()}
                   for p in ("baseline", "speculative")}
        totals = {p: sum(v.values()) for p, v in statics.items()}
        better = min(totals.values())
        sent = {x["id"]: x["sent_s"] for x in st["policies"]["baseline"]["requests"]}
        bounds = {}
        for width in (2.0, 5.0, 10.0):
            win: dict[int, list[float]] = collections.defaultdict(lambda: [0.0, 0.0])
            for rid, t in sent.items():
                win[int(t // width)][0] += statics["baseline"][rid]
                win[int(t // width)][1] += statics["speculative"][rid]
            bounds[width] = sum(min(v) for v in win.values()) / better
        cells = {}
        for mig in ("off", "on"):
            for seed in (1, 2):
                path = runs / f"{w}-{mig}-s{seed}.json"
                if not path.exists():
                    continue
                doc = load(path)
                reqs = doc["policies"]["adaptive"]["requests"]
                errors = doc["policies"]["adaptive"]["summary"]["errors"]
                total = sum(x["e2e_s"] for x in reqs)
                logs = runs / f"{w}-{mig}-s{seed}-logs"
                log = (logs / "gateway-adaptive.log").read_text()
                switches = log.count('"event":"regime_switch"')
                metrics = (logs / "gateway-adaptive.metrics.txt").read_text()
                moved = re.search(r'specgate_migrations_total\{reason="switch"\} ([0-9.]+)', metrics)
                costs = []
                for t0, to in switch_times(reqs):
                    ids = [x["id"] for x in reqs if t0 <= x["sent_s"] < t0 + 5.0]
                    by_id = {x["id"]: x for x in reqs}
                    costs.append(sum(by_id[i]["e2e_s"] - statics[to][i] for i in ids) / better)
                cells[(mig, seed)] = {"ratio": total / better, "switches": switches, "errors": errors,
                                      "moved": float(moved.group(1)) if moved else 0.0,
                                      "worst_switch_cost": max(costs, default=0.0), "switch_costs": costs,
                                      "spec_share": doc["policies"]["adaptive"]["summary"]["routed"].get(
                                          "speculative", 0) / len(reqs)}
        rows.append({"workload": w, "baseline_s": totals["baseline"] / len(sent),
                     "speculative_s": totals["speculative"] / len(sent), "bounds": bounds, "cells": cells})
    print("| workload | baseline s | speculative s | bound 10 / 5 / 2 s | off s1, s2 | on s1, s2 | on ÷ off "
          "| switches off / on | moved (on) | worst switch cost off / on | errors |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        c = r["cells"]

        def get(mig: str, key: str, fmt: str = "{:.3f}", c: dict[Any, Any] = c) -> str:
            return ", ".join(fmt.format(c[(mig, s)][key]) for s in (1, 2) if (mig, s) in c)

        ratio = [c[("on", s)]["ratio"] / c[("off", s)]["ratio"] for s in (1, 2) if ("on", s) in c and ("off", s) in c]
        b = r["bounds"]
        print(f"| {r['workload']} | {r['baseline_s']:.3f} | {r['speculative_s']:.3f} "
              f"| {b[10.0]:.3f} / {b[5.0]:.3f} / {b[2.0]:.3f} "
              f"| {get('off', 'ratio')} | {get('on', 'ratio')} | {', '.join(f'{x:.3f}' for x in ratio)} "
              f"| {get('off', 'switches', '{}')} / {get('on', 'switches', '{}')} | {get('on', 'moved', '{:.0f}')} "
              f"| {get('off', 'worst_switch_cost', '{:+.2%}')} / {get('on', 'worst_switch_cost', '{:+.2%}')} "
              f"| {get('off', 'errors', '{}')} / {get('on', 'errors', '{}')} |")
    for r in rows:  # JSON keys: "off-s1", ...
        r["cells"] = {f"{mig}-s{seed}": v for (mig, seed), v in r["cells"].items()}
        r["bounds"] = {f"{w:g}s": b for w, b in r["bounds"].items()}
    json.dump(rows, sys.stderr, indent=1)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
