"""How right the regime's mix ratio was: `python -m gateway.bench.mix_accuracy DIR [STATICS_DIR]` pairs every
`adaptive--NAME.json` in DIR with `static--NAME.json` (in STATICS_DIR, default DIR) and prints, per cell, the mix
ratio the gateway held at the end of the run (`/admin/state`: predicted cost of the window on the baseline over
its cost on the speculative server) beside what the two static runs measured over the same last requests of the
trace (mean end-to-end on the baseline over the speculative server's). A ratio above 1 says speculation pays.

The two are not computed over exactly the same thing: the gateway's window holds its last
`SPECGATE_REGIME_WINDOW_REQUESTS` single-completion requests at the loads the adaptive run saw, the statics'
the same trace positions at their own loads. Over many cells the error's sign and size still show which way the
model leans (robust-2026-12-04-h: +5% toward speculation on average, up to +17% at load 7)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gateway.settings import Settings

WINDOW: int = Settings.model_fields["regime_window_requests"].default  # the regime's window, by default


def measured_ratio(static_doc: dict[str, Any], last: int = WINDOW) -> float:
    """Σ e2e of the trace's last `last` requests on the static baseline / on the static speculative server."""
    policies = static_doc["policies"]
    base = sum(float(r["e2e_s"]) for r in policies["baseline"]["requests"][-last:])
    spec = sum(float(r["e2e_s"]) for r in policies["speculative"]["requests"][-last:])
    return base / spec


def accuracy_row(name: str, static_doc: dict[str, Any], adaptive_doc: dict[str, Any]) -> dict[str, object]:
    learned = adaptive_doc["policies"]["adaptive"].get("learned") or {}
    regimes = learned.get("regimes") or {}
    regime: dict[str, Any] = next(iter(regimes.values()), {})
    model = regime.get("mix_ratio")
    truth = measured_ratio(static_doc)
    steps = (learned.get("learner") or {}).get("step_models") or {}
    return {"cell": name, "role": regime.get("role"), "model": model, "measured": truth,
            "error": None if model is None else model / truth, "load": (regime.get("mix") or {}).get("load"),
            "steps_ms": {role: (1e3 * m["base_s"], 1e3 * m["per_request_s"], m["observations"])
                         for role, m in steps.items()}}


def _fmt(x: object, digits: int = 3) -> str:
    return "—" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def markdown(rows: list[dict[str, object]]) -> str:
    lines = ["| cell | regime at the end | model mix ratio | measured (statics) | model ÷ measured | load | "
             "step ms at batch 1 + per request (observations) |", "|---|---|---|---|---|---|---|"]
    for r in rows:
        steps = r["steps_ms"]
        assert isinstance(steps, dict)
        text = "; ".join(f"{role} {b:.2f} + {g:.3f} ({n})" for role, (b, g, n) in steps.items())
        lines.append(f"| {r['cell']} | {_fmt(r['role'])} | {_fmt(r['model'])} | {_fmt(r['measured'])} | "
                     f"{_fmt(r['error'])} | {_fmt(r['load'], 1)} | {text} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    directory = Path(argv[0])
    statics = Path(argv[1]) if len(argv) > 1 else directory
    rows = []
    for adaptive in sorted(directory.glob("adaptive--*.json")):
        name = adaptive.stem.removeprefix("adaptive--")
        static = statics / f"static--{name}.json"
        if static.exists():
            rows.append(accuracy_row(name, json.loads(static.read_text()), json.loads(adaptive.read_text())))
    print(markdown(rows), end="")
    return 0 if rows else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
