"""The per-class table of a measure_acceptance.py results.json (and the training logs, if given).

    python deploy/gpu/train/summarize.py OUT/results.json [MODELS_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def fmt(x: Any, spec: str = ".2f") -> str:
    return "–" if x is None else format(x, spec)


def training(models: Path) -> list[str]:
    lines = ["| model | params | steps | tokens | epochs | train s | tok/s | held-out loss | held-out ppl |",
             "|---|---|---|---|---|---|---|---|---|"]
    for m in ("target", "draft"):
        p = models / m / "train_log.json"
        if p.exists():
            d = json.loads(p.read_text())
            lines.append(f"| {m} | {d['params'] / 1e6:.1f}M | {d['steps']} | {d['tokens']:,} | {d['epochs']} | "
                         f"{d['train_s']} | {d['tokens_per_s']:,} | {d['heldout_loss']} | {d['heldout_ppl']} |")
    return lines if len(lines) > 2 else []


def table(data: dict[str, Any]) -> list[str]:
    servers = data.get("servers", {})
    base = servers.get("baseline", {}).get("segments", {})
    lines = ["| server | class / mode | n | tok/step | acc. rate | mean acc. len | e2e s | out tok/s | vs baseline |",
             "|---|---|---|---|---|---|---|---|---|"]
    for label, res in servers.items():
        for seg, s in res.get("segments", {}).items():
            b = base.get(seg, {}).get("mean_e2e_s")
            speed = b / s["mean_e2e_s"] if b and s.get("mean_e2e_s") else None
            lines.append(f"| {label} | {seg} | {s['n']} | {fmt(s.get('tokens_per_step'))} | "
                         f"{fmt(s.get('acceptance_rate'))} | {fmt(s.get('mean_acceptance_length'))} | "
                         f"{fmt(s.get('mean_e2e_s'), '.3f')} | {fmt(s.get('output_tok_per_s'), '.0f')} | "
                         f"{fmt(speed)}× |")
        if res.get("skipped"):
            lines.append(f"\n{label}: skipped (no time left) {', '.join(res['skipped'])}\n")
    return lines


def main(argv: list[str]) -> int:
    path = Path(argv[0])
    out = ["# Acceptance per task class (issue 39)", ""]
    if len(argv) > 1:
        out += [*training(Path(argv[1])), ""]
    if path.exists():
        data = json.loads(path.read_text())
        out += [f"meta: {json.dumps(data.get('meta', {}))}", "", *table(data)]
    else:
        out.append(f"(no {path})")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
