"""One evaluation cell: a `specgate bench` run per cell, seeds, and the dated table page (shared by
`specgate evaluate` and its fleet cells)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

SEEDS = (1, 2, 3)


def write_table(path: Path, title: str, about: str, table: str) -> None:
    """A dated markdown results page: title, what was run, the table (also printed)."""
    date = datetime.now(UTC).isoformat(timespec="seconds")
    path.write_text(f"# {title} ({date})\n\n{about}\n\n{table}")
    print(table)



def bench_cell(common: list[str], others: list[str], out: Path) -> None:
    """One cell: `others` once, adaptive with `len(SEEDS)` seeds (`bench --repeat`), merged into `out`."""
    base = [sys.executable, "-m", "gateway", "bench", *common]
    others_out = out.with_name(out.stem + "--others.json")
    print("$", " ".join(base[2:]), flush=True)
    subprocess.run([*base, "--policies", ",".join(others), "--out", str(others_out)], check=False,
                   stdout=subprocess.DEVNULL)
    subprocess.run([*base, "--policies", "adaptive", "--repeat", str(len(SEEDS)), "--seed", str(SEEDS[0]),
                    "--out", str(out)], check=False, stdout=subprocess.DEVNULL)
    if others_out.exists() and out.exists():
        merged = json.loads(out.read_text())
        merged["policies"].update(json.loads(others_out.read_text())["policies"])
        out.write_text(json.dumps(merged, indent=1))
        others_out.unlink()
