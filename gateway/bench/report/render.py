"""Render a `ReportData`: a terminal table, plain-words verdicts, PNG plots and one HTML page."""

from __future__ import annotations

import base64
import html
import io
from typing import Any

from rich.console import Console
from rich.table import Table

from gateway.bench.report.data import ClassRow, ReportData, pays_at

PAYS, HURTS = 1.05, 0.95


def _f(value: float | None, digits: int = 2, suffix: str = "") -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def class_verdict(row: ClassRow) -> str:
    if row.speedup is None:
        return "not measured"
    if row.speedup >= PAYS:
        return "speculate"
    if row.speedup <= HURTS:
        return "don't"
    return "no gain"


def verdict_lines(data: ReportData) -> list[str]:
    lines = []
    pays = [r.task_class for r in data.classes if r.speedup is not None and r.speedup >= PAYS]
    hurts = [r.task_class for r in data.classes if r.speedup is not None and r.speedup <= HURTS]
    if data.overall_speedup is not None:
        s = data.overall_speedup
        if abs(s - 1.0) < 0.02:
            lines.append("Overall, speculative decoding is about as fast as baseline on this traffic.")
        else:
            lines.append(f"Overall, speculative decoding is {s:.2f}x baseline's speed on this traffic."
                         if s > 1 else f"Overall, speculative decoding is {1 / s:.2f}x slower than baseline here.")
    if pays:
        lines.append(f"It pays for: {', '.join(pays)}.")
    if hurts:
        lines.append(f"It costs time for: {', '.join(hurts)}.")
    if data.load is not None and data.load.points:
        top = max(p[0] for p in data.load.points)
        where = pays_at(data.load.points)
        if data.load.threshold is not None:
            lines.append(f"Speculation stopped paying above about {data.load.threshold:g} {data.load.unit}.")
        elif where == "all":
            lines.append(f"Speculation kept paying at every measured load (up to {top:g} {data.load.unit}).")
        elif where == "none":
            lines.append(f"Speculation did not pay at any measured load (0 to {top:g} {data.load.unit}).")
    gib = data.memory.get("second_server_gib")
    if gib is not None:
        lines.append(f"The second (speculative) server costs about {gib:.1f} GiB of GPU memory "
                     f"({data.memory.get('detail', '')}).")
    if data.gateway_gain is not None:
        lines.append(f"Routing per request ({data.gateway_policy}) was {data.gateway_gain:.2f}x the best single "
                     "backend" + (": worth running the pair behind the gateway." if data.gateway_gain >= PAYS
                                  else "; the gain does not justify the second server." if data.gateway_gain < 1.0
                                  else "."))
    elif pays and not hurts:
        lines.append("Verdict: run speculative decoding for this traffic.")
    elif hurts and not pays:
        lines.append("Verdict: speculative decoding is not worth it for this traffic; keep the baseline.")
    elif pays and hurts:
        lines.append("Verdict: mixed; route per request (specgate adaptive) rather than choosing one server.")
    if data.extra.get("plan"):
        lines.append(data.extra["plan"])
    return lines


def table(data: ReportData) -> Table:
    t = Table(title=f"specgate report: {data.source}")
    for col in ("class", "req", "tok/step", "speedup", "baseline p50/p90/p99", "spec p50/p90/p99", "base/spec",
                "verdict"):
        t.add_column(col, justify="left" if col in ("class", "verdict") else "right")
    for r in data.classes:
        def pct(role: str, row: ClassRow = r) -> str:
            q = row.latency.get(role)
            return "-" if not q else "/".join(_f(q.get(k)) for k in ("p50", "p90", "p99"))

        routed = f"{r.routed.get('baseline', 0):.0f}/{r.routed.get('speculative', 0):.0f}" if r.routed else "-"
        t.add_row(r.task_class, str(r.requests), _f(r.tokens_per_step), _f(r.speedup, 2, "x"), pct("baseline"),
                  pct("speculative"), routed, class_verdict(r))
    return t


def print_report(data: ReportData, console: Console) -> None:
    console.print(table(data))
    console.print(f"speedup basis: {data.speedup_basis}")
    if data.load is not None and data.load.points:
        pts = ", ".join(f"{x:g}: {y:.2f}x" for x, y in data.load.points)
        console.print(f"speedup by load ({data.load.unit}): {pts}")
    for line in verdict_lines(data):
        console.print(f"[bold]{line}[/bold]")


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return base64.b64encode(buf.getvalue()).decode()


def plots(data: ReportData) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = []
    names = [r.task_class for r in data.classes]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4))
    speed = [r.speedup or 0 for r in data.classes]
    a1.bar(names, speed, color=["tab:green" if s >= 1 else "tab:red" for s in speed])
    a1.axhline(1.0, color="black", lw=0.8)
    a1.set_title("speculative speedup over baseline")
    a2.bar(names, [r.tokens_per_step or 0 for r in data.classes], color="tab:blue")
    a2.set_title("acceptance: tokens per engine step")
    for ax in (a1, a2):
        ax.tick_params(axis="x", rotation=20)
    fig.tight_layout()
    out.append(("Speedup and acceptance per class", _png(fig)))
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(12, 4))
    width = 0.12
    for i, (role, q) in enumerate((r, q) for r in ("baseline", "speculative") for q in ("p50", "p90", "p99")):
        xs = [c + (i - 2.5) * width for c in range(len(names))]
        ax.bar(xs, [(r.latency.get(role) or {}).get(q) or 0 for r in data.classes], width, label=f"{role} {q}")
    ax.set_xticks(range(len(names)), names, rotation=20)
    ax.set_ylabel("end-to-end seconds")
    ax.legend(ncol=2, fontsize=8)
    ax.set_title("latency percentiles per class and backend")
    fig.tight_layout()
    out.append(("Latency percentiles", _png(fig)))
    plt.close(fig)
    if data.load is not None and data.load.points:
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot([x for x, _ in data.load.points], [y for _, y in data.load.points], marker="o")
        ax.axhline(1.0, color="black", lw=0.8)
        if data.load.threshold is not None:
            ax.axvline(data.load.threshold, color="tab:red", ls="--", label=f"stops paying ≈ {data.load.threshold:g}")
            ax.legend()
        ax.set_xlabel(data.load.unit)
        ax.set_ylabel("speedup of speculative")
        ax.set_title("speedup vs load")
        fig.tight_layout()
        out.append(("Speedup vs load", _png(fig)))
        plt.close(fig)
    return out


def html_page(data: ReportData) -> str:
    esc = html.escape
    head = ["class", "requests", "tokens/step", "speculative speedup", "baseline p50/p90/p99 s",
            "speculative p50/p90/p99 s", "routed baseline/speculative", "verdict"]
    rows = []
    for r in data.classes:
        lat = {role: "/".join(_f((r.latency.get(role) or {}).get(k)) for k in ("p50", "p90", "p99"))
               for role in ("baseline", "speculative")}
        routed = f"{r.routed.get('baseline', 0):.0f}/{r.routed.get('speculative', 0):.0f}" if r.routed else "-"
        cells = [r.task_class, str(r.requests), _f(r.tokens_per_step), _f(r.speedup, 2, "x"), lat["baseline"],
                 lat["speculative"], routed, class_verdict(r)]
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    imgs = "".join(f"<h2>{esc(title)}</h2><img alt='{esc(title)}' src='data:image/png;base64,{b64}'>"
                   for title, b64 in plots(data))
    verdict = "".join(f"<li>{esc(line)}</li>" for line in verdict_lines(data))
    load = ""
    if data.load is not None:
        load = f"<p>Load: {esc(data.load.note)}.</p>"
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>specgate report</title><style>"
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;text-align:right}td:first-child,td:last-child{text-align:left}"
        "img{max-width:100%}</style></head><body>"
        f"<h1>Is speculative decoding worth it? {esc(data.source)}</h1><h2>Verdict</h2><ul>{verdict}</ul>"
        f"<p>Speedup basis: {esc(data.speedup_basis)}.</p>{load}"
        "<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>" + "".join(rows) + "</table>"
        f"{imgs}</body></html>"
    )
