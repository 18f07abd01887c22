"""Why adaptive loses where it loses: per server, the requests, prompt and output tokens each policy sent it and
their mean end-to-end time; for the Mooncake cells, the share of each request's prefix blocks already sent to the
same server before it (an upper bound on prefix-cache reuse, eviction ignored).

    .venv/bin/python results/peers-2026-12-05/analyze.py --traces traces

Reads cells/*.json.gz (the bench results, per-request records) and logs/*.log.gz (adaptive's per-request
gateway lines, which name the instance); token counts come from the trace rows (the workload ids are
`SOURCE-ROW`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
from pathlib import Path
from typing import Any

from gateway.bench.evalset import WINDOWS
from gateway.workloads.traces import TraceRow, read_trace, select

HERE = Path(__file__).parent
POLICIES = ("adaptive", "sglang-router:cache_aware", "vllm-router:cache_aware", "vllm-router:power_of_two")


def _rows(name: str, traces: Path) -> dict[str, TraceRow]:
    w = next(w for w in WINDOWS if w.name == name)
    trace = read_trace(w.source, (traces / w.file).read_text())
    return {f"{w.source}-{r.row:07d}": r for r in select(trace.rows, w.start, w.seconds, w.rate_scale)}


def _instances(doc: dict[str, Any], cell: str, policy: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    result = doc["policies"][policy]
    if policy != "adaptive":
        return result["requests"], {r["id"]: r.get("instance") for r in result["requests"]}
    with gzip.open(HERE / "logs" / f"cell--{cell}--2+2--gateway-adaptive-1.log.gz", "rt") as f:
        lines = f.read().splitlines()
    logged = {d["id"]: d.get("instance") for d in map(json.loads, lines)}
    return [r for r in result["requests"] if r.get("repeat") == 1], logged


def balance(cell: str, doc: dict[str, Any], rows: dict[str, TraceRow]) -> None:
    for policy in POLICIES:
        records, where = _instances(doc, cell, policy)
        per: dict[str, list[Any]] = {}
        for r in records:
            row = rows[r["id"]]
            acc = per.setdefault(str(where.get(r["id"])), [0, 0, 0, []])
            acc[0] += 1
            acc[1] += row.prompt_tokens
            acc[2] += row.output_tokens
            acc[3].append(r["e2e_s"])
        ttft = statistics.fmean(r["ttft_s"] for r in records if r.get("ttft_s") is not None)
        servers = "; ".join(f"{i} {a[0]} req, {a[1] / 1000:.0f}k in, {a[2] / 1000:.1f}k out, "
                            f"{statistics.fmean(a[3]):.2f} s" for i, a in sorted(per.items()))
        print(f"| {cell} | {policy} | {ttft:.3f} | {servers} |")


def affinity(cell: str, doc: dict[str, Any], rows: dict[str, TraceRow]) -> None:
    for policy in POLICIES:
        _, where = _instances(doc, cell, policy)
        seen: dict[str, set[int]] = {}
        hit = total = 0
        for rid, row in sorted(rows.items(), key=lambda kv: kv[1].t):
            on = seen.setdefault(str(where.get(rid)), set())
            n = next((k for k, h in enumerate(row.hash_ids) if h not in on), len(row.hash_ids))
            hit, total = hit + n, total + len(row.hash_ids)
            on.update(row.hash_ids)
        print(f"| {cell} | {policy} | {hit}/{total} = {hit / total:.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=Path, default=Path("traces"))
    args = parser.parse_args()
    docs = {}
    for path in sorted((HERE / "cells").glob("*.json.gz")):
        with gzip.open(path, "rt") as f:
            docs[path.name.split("--")[1]] = json.load(f)
    rows = {cell: _rows(cell, args.traces) for cell in docs}
    print("| cell | policy | mean TTFT s | per server: requests, prompt tokens, output tokens, mean e2e |")
    print("|---|---|---|---|")
    for cell, doc in docs.items():
        balance(cell, doc, rows[cell])
    print("\n| cell | policy | prefix blocks already on the same server |\n|---|---|---|")
    for cell, doc in docs.items():
        if cell.startswith("mooncake"):
            affinity(cell, doc, rows[cell])


if __name__ == "__main__":
    main()
