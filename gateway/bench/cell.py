"""One evaluation cell: a `specgate bench` run per cell, seeds, and the dated table page (shared by
`specgate evaluate` and its fleet cells)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.bench.peers.spec import is_peer

SEEDS = (1, 2, 3)


def write_table(path: Path, title: str, about: str, table: str) -> None:
    """A dated markdown results page: title, what was run, the table (also printed)."""
    date = datetime.now(UTC).isoformat(timespec="seconds")
    path.write_text(f"# {title} ({date})\n\n{about}\n\n{table}")
    print(table)


def peer_ratio(policies: dict[str, Any], specgate_mean: float) -> dict[str, Any]:
    """The best peer router of a cell (`bench --peers`; a peer that did not start has no mean) and specgate's
    mean over it; empty without peers."""
    means = {n: p["summary"]["mean_e2e_s"] for n, p in policies.items() if is_peer(n)}
    if not means:
        return {}
    ran = {n: m for n, m in means.items() if m is not None}
    best = min(ran, key=lambda n: ran[n]) if ran else None
    return {"peer_means": {n: None if m is None else round(m, 3) for n, m in means.items()}, "best_peer": best,
            "adaptive_vs_best_peer": round(specgate_mean / ran[best], 3) if best else None}


def bench_cell(common: list[str], others: list[str], out: Path, peers: str = "") -> None:
    """One cell: `others` (and the peer routers, `bench --peers`) once, adaptive with `len(SEEDS)` seeds
    (`bench --repeat`), merged into `out`."""
    base = [sys.executable, "-m", "gateway", "bench", *common]
    others_out = out.with_name(out.stem + "--others.json")
    print("$", " ".join(base[2:]), flush=True)
    subprocess.run([*base, "--policies", ",".join(others), *(["--peers", peers] if peers else []),
                    "--out", str(others_out)], check=False, stdout=subprocess.DEVNULL)
    subprocess.run([*base, "--policies", "adaptive", "--repeat", str(len(SEEDS)), "--seed", str(SEEDS[0]),
                    "--out", str(out)], check=False, stdout=subprocess.DEVNULL)
    if others_out.exists() and out.exists():
        merged = json.loads(out.read_text())
        merged["policies"].update(json.loads(others_out.read_text())["policies"])
        out.write_text(json.dumps(merged, indent=1))
        others_out.unlink()
