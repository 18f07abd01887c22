"""The ratio tables of this folder: specgate's adaptive (median of its seeds) over the best peer router, the best
static fleet of the same size and the hindsight class map, per window of the 2 + 2 fleet; the prediction error.

    python results/fleet-quality-2026-12-05-c/table.py RUN_DIR [LABEL ...]

RUN_DIR holds `<label>/<window>-s<seed>.json` (adaptive, one file per seed) and `hind/<window>.json` (the
hindsight map run); the statics and the peers come from `results/peers-2026-12-05/cells/cell--<window>--2+2.json.gz`
(same emulator, fleet and window files), or for the windows first run here (`NEW`) from `new/cell--<window>--2+2.json`
in RUN_DIR, which also holds their hindsight map run.
"""

from __future__ import annotations

import glob
import gzip
import json
import statistics
import sys
from pathlib import Path

PEERS = Path(__file__).resolve().parents[1] / "peers-2026-12-05" / "cells"
WINDOWS = ("azure-code-a", "azure-conv-b-x2", "azure-code-burst", "azure-conv-a", "mooncake-a", "mooncake-b")
NEW = ("azure-code-b", "mooncake-synthetic")


def stored(run: Path, window: str) -> dict[str, float]:
    if window in NEW:
        path = run / "new" / f"cell--{window}--2+2.json"
        doc = json.loads(path.read_text()) if path.exists() else {"policies": {}}
    else:
        with gzip.open(PEERS / f"cell--{window}--2+2.json.gz") as f:
            doc = json.load(f)
    return {n: p["summary"]["mean_e2e_s"] for n, p in doc["policies"].items() if n != "adaptive"}


def seeds(run: Path, label: str, window: str) -> list[tuple[int, float, float | None, float | None]]:
    out = []
    for path in sorted(glob.glob(str(run / label / f"{window}-s*.json"))):
        doc = json.loads(Path(path).read_text())
        a = doc["policies"]["adaptive"]
        out.append((int(path.rsplit("-s", 1)[1].split(".")[0]), a["summary"]["mean_e2e_s"],
                    a["prediction"]["median_error_ratio"], a["summary"]["mean_ttft_s"]))
    return out


def main() -> None:
    run, labels = Path(sys.argv[1]), sys.argv[2:] or ["after"]
    print("| window | best static | best peer | hindsight map | "
          + " | ".join(f"{lb}: adaptive (seeds) | ÷ static | ÷ peer | ÷ hindsight | pred. err (seeds)" for lb in labels)
          + " |")
    print("|" + "---|" * (4 + 5 * len(labels)))
    for w in (*WINDOWS, *NEW):
        means = stored(run, w)
        if not means:
            continue
        static = min((v, n) for n, v in means.items() if n.startswith("least_loaded@"))
        in_cell = means.pop("hindsight", None)
        peer = min((v, n) for n, v in means.items() if ":" in n)
        hind_path = run / "hind" / f"{w}.json"
        hind = json.loads(hind_path.read_text())["policies"]["hindsight"]["summary"]["mean_e2e_s"] \
            if hind_path.exists() else in_cell
        row = [w, f"{static[0]:.3f} ({static[1].split('@')[1]})", f"{peer[0]:.3f} ({peer[1]})",
               "-" if hind is None else f"{hind:.3f}"]
        for lb in labels:
            s = seeds(run, lb, w)
            if not s:
                row += ["-"] * 5
                continue
            med = statistics.median(x[1] for x in s)
            row += [", ".join(f"{x[1]:.3f} (s{x[0]})" for x in s), f"{med / static[0]:.3f}", f"{med / peer[0]:.3f}",
                    "-" if hind is None else f"{med / hind:.3f}", ", ".join(f"{x[2]}" for x in s)]
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
