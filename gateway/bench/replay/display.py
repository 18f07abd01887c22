"""Terminal tables (rich) and the bench plot (matplotlib, Agg) for a results document."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from gateway.bench.replay.verdict import class_rows


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def policy_table(doc: dict[str, Any]) -> Table:
    table = Table(title=f"{doc['workload']} on {doc['profile']}: end-to-end and TTFT in simulated seconds")
    for col in ("policy", "ok/err", "mean", "p50", "p90", "p99", "TTFT", "p90 TTFT", "tok/s", "base/spec",
                "pred err"):
        table.add_column(col, justify="left" if col == "policy" else "right", no_wrap=col == "policy")
    for name, result in doc["policies"].items():
        s = result["summary"]
        pred = result.get("prediction", {}).get("median_error_ratio")
        table.add_row(name, f"{s['requests'] - s['errors']}/{s['errors']}", _fmt(s["mean_e2e_s"]),
                      _fmt(s["p50_e2e_s"]), _fmt(s["p90_e2e_s"]), _fmt(s["p99_e2e_s"]), _fmt(s["mean_ttft_s"]),
                      _fmt(s["p90_ttft_s"]), _fmt(s["output_tokens_per_s"], 0),
                      f"{s['routed']['baseline']}/{s['routed']['speculative']}",
                      "-" if pred is None else f"{pred:.0%}")
    return table


def class_table(doc: dict[str, Any]) -> Table:
    table = Table(title="per task class: mean e2e (s); speedup = baseline / speculative on the same requests")
    for col in ("class", "req", "baseline", "speculative", "speedup", "tok/step", "gateway", "→ spec", "speculation"):
        table.add_column(col, justify="left" if col in ("class", "speculation") else "right")
    for row in class_rows(doc):
        share = row["gateway_speculative_share"]
        table.add_row(row["class"], str(row["requests"]), _fmt(row["baseline_mean_e2e_s"]),
                      _fmt(row["speculative_mean_e2e_s"]), _fmt(row["speedup"], 2) + "x" if row["speedup"] else "-",
                      _fmt(row["tokens_per_step"], 2), _fmt(row["gateway_mean_e2e_s"]),
                      "-" if share is None else f"{share:.0%}", row["speculation"])
    return table


def make_console() -> Console:
    """A console that does not squeeze the tables to 80 columns when the output is a pipe or a file."""
    import sys

    return Console() if sys.stdout.isatty() else Console(width=110)


def print_tables(doc: dict[str, Any], console: Console) -> None:
    console.print(policy_table(doc))
    console.print(class_table(doc))


def label(policy: str) -> str:
    """`adaptive@baseline+speculative` -> `adaptive, 2 GPUs: baseline + speculative`; a plain name: one GPU pair."""
    name, _, layout = policy.partition("@")
    if not layout:
        return f"{name} (1 GPU pair)"
    return f"{name}, {layout.replace('+', ' + ')}"


def plot(doc: dict[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    policies = list(doc["policies"])
    classes = sorted({c for p in doc["policies"].values() for c in p.get("by_class", {})})
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [1, 2]})
    xs = range(len(policies))
    for offset, key, stat in ((-0.27, "mean_e2e_s", "mean"), (0.0, "p90_e2e_s", "p90"), (0.27, "p99_e2e_s", "p99")):
        ax1.bar([x + offset for x in xs], [doc["policies"][p]["summary"][key] or 0 for p in policies], 0.27,
                label=stat)
    ax1.set_xticks(list(xs), [label(p) for p in policies], rotation=20, ha="right")
    ax1.set_ylabel("end-to-end latency (simulated s)")
    ax1.set_title("latency by policy")
    ax1.legend()
    width = 0.8 / max(1, len(policies))
    for i, p in enumerate(policies):
        by_class = doc["policies"][p].get("by_class", {})
        ax2.bar([c + i * width - 0.4 + width / 2 for c in range(len(classes))],
                [(by_class.get(cls) or {}).get("mean_e2e_s") or 0 for cls in classes], width, label=label(p))
    ax2.set_xticks(range(len(classes)), classes, rotation=20)
    ax2.set_ylabel("mean end-to-end latency (simulated s)")
    ax2.set_title("latency by task class")
    ax2.legend()
    fig.suptitle(f"{doc['workload']} on {doc['profile']}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
