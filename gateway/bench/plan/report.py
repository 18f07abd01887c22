"""The plan's table (mean, p90 e2e, p90 TTFT, throughput per layout and load), recommendation and plot."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def table(doc: dict[str, Any]) -> str:
    lines = [f"{'load':>5}  {'layout':<28} {'mean s':>8} {'p90 s':>8} {'p90 TTFT':>9} {'tok/s':>8}  analytic"]
    for r in doc["rows"]:
        best = doc["recommendation"].get(str(r["load"])) == r["layout"]
        lines.append(f"{r['load']:>5g}  {r['layout']:<28} {r['mean_e2e_s']:>8.3f} {r['p90_e2e_s']:>8.3f} "
                     f"{r['p90_ttft_s']:>9.3f} {r['tokens_per_s'] or 0:>8.1f}  {r['analytic_mean_s']:.3f}"
                     f"{'  <- recommended' if best else ''}")
    return "\n".join(lines)


def verdicts(doc: dict[str, Any]) -> list[str]:
    return [f"On {doc['gpus']} GPUs of this traffic at {load}x its rate: {layout.replace('+', ' + ')}"
            for load, layout in doc["recommendation"].items()]


def plot(doc: dict[str, Any], path: Path) -> Path | None:
    """Mean e2e per replayed layout against load (one line per layout); None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for name in dict.fromkeys(r["layout"] for r in doc["rows"]):
        rows = [r for r in doc["rows"] if r["layout"] == name]
        ax.plot([r["load"] for r in rows], [r["mean_e2e_s"] for r in rows], marker="o", label=name)
    ax.set_xlabel("load (x the workload's arrival rate)")
    ax.set_ylabel("mean end-to-end (simulated s)")
    ax.set_title(f"specgate plan: {doc['gpus']} GPUs, {doc['workload']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
