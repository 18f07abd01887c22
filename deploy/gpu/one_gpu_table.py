"""The one-GPU table: each one-GPU layout's rows, real next to emulated (results.json files of real_bench.py).

    python deploy/gpu/one_gpu_table.py REAL_DIR [EMULATED_DIR...]

A directory holds real_bench.py outputs as `*results.json` files (or sub-directories with `results.json`), as
run_one_gpu.sh leaves them. Rows: (a) baseline alone, (b) dynamic-K n-gram alone, (b') static n-gram alone,
(c) the pair with adaptive (each seed), (d) the pair with each static policy; per phase: mean and p90
end-to-end, p90 TTFT, tokens per step, requests per role. Emulated columns give mean e2e and its ratio to real.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

LAYOUT = {"single:baseline": "(a) baseline alone, 0.90", "single:dynk": "(b) dynamic-K n-gram alone, 0.90",
          "single:ngram": "(b') static n-gram alone, 0.90"}


def load(folder: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """(phase, row name) -> summary, the last file read winning (later passes override earlier ones)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    for f in sorted(folder.glob("*results.json")) + sorted(folder.glob("*/results.json")):
        for run in json.loads(f.read_text())["runs"]:
            name = f"single:{run['direct_target']}" if run["policy"] == "single" else run["policy"]
            rows[(run["phase"], name)] = run["summary"] | {"acc": run.get("vllm_mean_acceptance_length")}
    return rows


def label(name: str) -> str:
    if name in LAYOUT:
        return LAYOUT[name]
    kind = "(c) pair + specgate" if name.startswith("adaptive") else "(d) pair, static"
    return f"{kind} {name}"


def order(name: str) -> tuple[int, str]:
    keys = ["single:baseline", "single:dynk", "single:ngram"]
    return (keys.index(name), name) if name in keys else (3 if name.startswith("adaptive") else 4, name)


def table(real: dict[tuple[str, str], dict[str, Any]], emulated: list[dict[tuple[str, str], dict[str, Any]]]) -> str:
    head = ("| load | layout | mean e2e s | p90 e2e s | p90 TTFT s | tok/step | requests base/spec |"
            + "".join(f" emulated {i + 1} mean (ratio) |" for i in range(len(emulated))))
    lines = [head, "|" + "---|" * (7 + len(emulated))]
    for phase in ("low", "high"):
        names = sorted({n for p, n in real if p == phase}, key=order)
        for name in names:
            s = real[(phase, name)]
            tps = ", ".join(f"{k} {v:.2f}" for k, v in sorted(s["tokens_per_step"].items()))
            split = s["split"]
            roles = "-" if name.startswith("single") else f"{split.get('baseline', 0)}/{split.get('speculative', 0)}"
            cells = [f" {phase} | {label(name)} | {s['mean_e2e_s']:.3f} | {s['p90_e2e_s']:.3f} |"
                     f" {s['p90_ttft_s']:.3f} | {tps} | {roles} |"]
            for emu in emulated:
                e = emu.get((phase, name))
                ratio = f"{e['mean_e2e_s'] / s['mean_e2e_s']:.2f}" if e else ""
                cells.append(" - |" if e is None else f" {e['mean_e2e_s']:.3f} ({ratio}) |")
            lines.append("|" + "".join(cells))
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    print(table(load(Path(argv[0])), [load(Path(a)) for a in argv[1:]]), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
