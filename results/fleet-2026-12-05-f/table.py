"""Tables of results/fleet-2026-12-05-f.

    python table.py cells DIR      per cell: main adaptive seeds 1-3 against the three peers, the two static
                                   fleets and the hindsight map (DIR/main--W--F--adaptive.json, DIR/peers--W--F.json)
    python table.py ab DIR         per cell: main against the branch, seeds 4-6 (DIR/{main,fix2}--W--F--adaptive.json)
Median prediction error per seed from the gateway's access logs (|predicted - observed| / observed; the logs are
not kept in raw/, so "–" there; the README's tables were made on the run folders); 1-min load
average at each bench's start and end from the .uptime files.
"""

from __future__ import annotations

import glob
import gzip
import json
import os
import re
import statistics
import sys
from typing import Any

PEERS = ("vllm-router:cache_aware", "vllm-router:power_of_two", "sglang-router:cache_aware")
SHORT = {"vllm-router:cache_aware": "vllm ca", "vllm-router:power_of_two": "vllm p2",
         "sglang-router:cache_aware": "sglang ca"}


def load(path: str) -> dict[str, Any]:
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def per_seed(pol: dict[str, Any]) -> list[float]:
    return [r["mean_e2e_s"] for r in pol["runs"]]


def pred_errors(logdir: str) -> list[float]:
    out = []
    for log in sorted(glob.glob(f"{logdir}/gateway-adaptive*.log")):
        errs = []
        with open(log) as f:
            for line in f:
                if '"event":"request"' not in line:
                    continue
                rec = json.loads(line)
                p, o = rec.get("predicted_s"), rec.get("observed_s")
                if p is not None and o:
                    errs.append(abs(p - o) / o)
        if errs:
            out.append(statistics.median(errs))
    return out


def found(path: str) -> str | None:
    """`path`, or its gzipped copy (raw/ holds the results gzipped), or None."""
    return next((p for p in (path, path + ".gz") if os.path.exists(p)), None)


def med(errs: list[float]) -> str:
    return f"{statistics.median(errs):.3f}" if errs else "–"


def loads(path: str) -> str:
    if not os.path.exists(path):
        return ""
    with open(path) as f:
        vals = [float(m) for m in re.findall(r"load average: ([0-9.]+)", f.read())]
    return f"{min(vals):.1f}–{max(vals):.1f}" if vals else ""


def cells(folder: str) -> None:
    print("| workload | fleet | main adaptive (s), seeds 1–3 | spec. share | best peer (s) | hindsight map (s) | "
          "÷ best peer (median; per seed) | ÷ hindsight | median pred. error per seed | load (1-min) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    extra = []
    for path in sorted(glob.glob(f"{folder}/peers--*.json*")):
        _, w, f = os.path.basename(path).split(".json")[0].split("--")
        others = load(path)["policies"]
        peers = {k: v["summary"]["mean_e2e_s"] for k, v in others.items() if k in PEERS}
        best = min(peers.items(), key=lambda kv: kv[1])
        hind = others["hindsight"]["summary"]["mean_e2e_s"]
        statics = {k: v["summary"]["mean_e2e_s"] for k, v in others.items() if k.startswith("least_loaded@")}
        ap = f"{folder}/main--{w}--{f}--adaptive.json"
        pol = load(found(ap) or ap)["policies"]["adaptive"]
        seeds = per_seed(pol)
        med = statistics.median(seeds)
        errs = pred_errors(ap[: -len(".json")] + "-logs")
        share = "/".join(f"{r['speculative_share']:.2f}" for r in pol["runs"])
        print(f"| {w} | {f} | {', '.join(f'{s:.3f}' for s in seeds)} | {share} | {best[1]:.3f} ({SHORT[best[0]]}) | "
              f"{hind:.3f} | **{med / best[1]:.3f}**; {', '.join(f'{s / best[1]:.3f}' for s in seeds)} | "
              f"{med / hind:.3f} | {', '.join(f'{e:.3f}' for e in errs) or '–'} | "
              f"{loads(f'{folder}/{w}--{f}.uptime')} |")
        extra.append(f"- {w} {f}: " + ", ".join(f"{SHORT[k]} {v:.3f}" for k, v in peers.items()) + "; statics "
                     + ", ".join(f"{k.split('@')[1]} {v:.3f}" for k, v in statics.items()) + f"; hindsight {hind:.3f}")
    print()
    print("\n".join(extra))


def ab(folder: str) -> None:
    print("| workload | fleet | main (s), seeds 4–6 | branch (s), seeds 4–6 | branch ÷ main (medians) | per seed | "
          "spec. share main / branch | median pred. error main / branch | load (1-min) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for stored in sorted(glob.glob(f"{folder}/main--*--adaptive.json*")):
        path = stored.split(".json")[0] + ".json"
        _, w, f, _ = os.path.basename(path).split(".json")[0].split("--")
        other = found(path.replace("/main--", "/fix2--"))
        if other is None:
            continue
        a, b = load(stored)["policies"]["adaptive"], load(other)["policies"]["adaptive"]
        sa, sb = per_seed(a), per_seed(b)
        ea = pred_errors(path[: -len(".json")] + "-logs")
        eb = pred_errors(other.split(".json")[0] + "-logs")
        share = lambda p: "/".join(f"{r['speculative_share']:.2f}" for r in p["runs"])  # noqa: E731
        print(f"| {w} | {f} | {', '.join(f'{s:.3f}' for s in sa)} | {', '.join(f'{s:.3f}' for s in sb)} | "
              f"**{statistics.median(sb) / statistics.median(sa):.3f}** | "
              f"{', '.join(f'{y / x:.3f}' for x, y in zip(sa, sb, strict=True))} | {share(a)} / {share(b)} | "
              f"{med(ea)} / {med(eb)} | {loads(f'{folder}/{w}--{f}.uptime')} |")


def ab2(folder: str) -> None:
    """Seeds 7-9, one bench per (version, seed), interleaved: DIR/{main,fix2}--W--F--sSEED.json."""
    print("| workload | fleet | main (s), seeds 7–9 | branch (s), seeds 7–9 | branch ÷ main (medians) | per seed | "
          "median pred. error main / branch | load (1-min) |")
    print("|---|---|---|---|---|---|---|---|")
    runs = glob.glob(f"{folder}/*--s*.json*")
    tags = sorted({os.path.basename(p).rsplit("--s", 1)[0].split("--", 1)[1] for p in runs})
    for tag in tags:
        w, f = tag.split("--")
        sa, sb, ea, eb = [], [], [], []
        for seed in (7, 8, 9):
            pa, pb = found(f"{folder}/main--{tag}--s{seed}.json"), found(f"{folder}/fix2--{tag}--s{seed}.json")
            if pa is None or pb is None:
                continue
            sa.append(load(pa)["policies"]["adaptive"]["summary"]["mean_e2e_s"])
            sb.append(load(pb)["policies"]["adaptive"]["summary"]["mean_e2e_s"])
            ea += pred_errors(pa.split(".json")[0] + "-logs")
            eb += pred_errors(pb.split(".json")[0] + "-logs")
        if not sa:
            continue
        print(f"| {w} | {f} | {', '.join(f'{s:.3f}' for s in sa)} | {', '.join(f'{s:.3f}' for s in sb)} | "
              f"**{statistics.median(sb) / statistics.median(sa):.3f}** | "
              f"{', '.join(f'{y / x:.3f}' for x, y in zip(sa, sb, strict=True))} | "
              f"{med(ea)} / {med(eb)} | {loads(f'{folder}/{tag}.uptime')} |")


if __name__ == "__main__":
    {"cells": cells, "ab": ab, "ab2": ab2}[sys.argv[1]](sys.argv[2])
