"""Markdown and rich renderings of a `specgate bench-overhead` results object."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

COLUMNS = (
    ("target", None), ("mode", None), ("c", None), ("req/s", "rps"), ("p50 ms", "p50_ms"), ("p99 ms", "p99_ms"),
    ("TTFT p50", "ttft_p50_ms"), ("TTFT p99", "ttft_p99_ms"), ("+p50 vs direct", "added_p50_ms"),
    ("+TTFT vs direct", "added_ttft_p50_ms"), ("CPU s/1k req", "cpu_ms_per_req"), ("RSS MB", "rss_after_mb"),
)


def _num(v: float | None) -> str:
    if v is None:
        return "–"
    if abs(v) >= 100:
        return f"{v:.0f}"
    if abs(v) >= 10:
        return f"{v:.1f}"
    return f"{v:.2f}"


def cell(point: dict[str, Any], key: str) -> str:
    med, lo, hi = point["median"].get(key), point["min"].get(key), point["max"].get(key)
    if med is None:
        return "–"
    if lo is None or hi is None or point.get("repeats", 1) < 2 or key.startswith("rss"):
        return _num(med)
    return f"{_num(med)} ({_num(lo)}–{_num(hi)})"


def point_rows(results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for p in results["points"]:
        errors = sum(r["errors"] for r in p["runs"])
        row = [p["target"] + (f" [{errors} err]" if errors else ""), p["mode"], str(p["concurrency"])]
        row += [cell(p, key) for _, key in COLUMNS[3:]]
        rows.append(row)
    return rows


def target_rows(results: dict[str, Any]) -> list[list[str]]:
    return [[t["target"], t["goal"], _num(t["measured"]) + " " + t["unit"],
             _num(t["bare_proxy"]) + (" " + t["unit"] if t["bare_proxy"] is not None else ""), t["result"], t["note"]]
            for t in results["targets_eval"]]


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        f"# specgate bench-overhead, {results['date']}", "",
        f"- machine: {m['nproc']} CPUs ({m['cpu_model']}), Python {m['python']}, {m['platform']}",
        f"- load before / after: `{results['load']['before']}` / `{results['load']['after']}`",
        f"- command: `{results['command']}`",
        f"- code: commit {results.get('git', {}).get('commit', '?')}, gateway files modified in the working tree: "
        f"{', '.join(results.get('git', {}).get('modified', [])) or 'none'}",
        "- builds: " + ("; ".join(f"{name}: {build}" for name, build in results.get("builds", {}).items()) or "?"),
        f"- pinning: {results['config']['pinning']}; niceness {results['config'].get('nice', 0)}",
        f"- requests per point: {results['config']['requests']} (c=1: {results['config']['requests_c1']}), "
        f"warm-up {results['config']['warmup']}, repeats {results['config']['repeats']}, "
        f"{results['config']['chunks']} chunks per stream, endpoint {results['config']['endpoint']}, "
        f"prompt {results['config'].get('prompt_chars', '?')} characters, client asks for include_usage: "
        f"{results['config'].get('include_usage', False)}",
        "- cells: median over repeats (min–max); CPU s/1k req is the target's process-tree CPU per 1,000 requests "
        "(= ms per request), measured with psutil over warm-up + measured requests", "",
        "## Targets", "",
    ]
    lines += _md_table(["target", "goal", "specgate", "bare proxy", "result", "note"], target_rows(results))
    lines += ["", "## Points", ""]
    lines += _md_table([c for c, _ in COLUMNS], point_rows(results))
    rss = results.get("rss", {})
    if rss.get("open_streams"):
        lines += ["", "## RSS with concurrent open streams", ""]
        lines += _md_table(["target", "streams", "open at once", "RSS before MB", "peak RSS MB", "errors"],
                           [[k, str(v["streams"]), str(v["max_open"]), _num(v["before_mb"]), _num(v["peak_mb"]),
                             str(v["errors"])] for k, v in rss["open_streams"].items()])
    if rss.get("long_run"):
        lines += ["", "## RSS over a long run", ""]
        for k, v in rss["long_run"].items():
            series = ", ".join(f"{n}: {mb:.0f}" for n, mb in v["series"])
            lines.append(f"- {k}: {v['requests']} requests at c={v['concurrency']} (plain and streaming "
                         f"alternating), flat={v['flat']}, growth in second half {v['growth_second_half_mb']:.1f} MB;"
                         f" RSS MB by requests done: {series}")
    w = results.get("workers")
    if w:
        lines += ["", "## Workers", "", w.get("note", "")]
    if results.get("profile"):
        lines += ["", "## Profile (py-spy, specgate under load)", "", "```", results["profile"]["text"], "```"]
        for name, other in (results.get("profiles") or {}).items():
            if other:
                lines += ["", f"## Profile (py-spy, {name} under the same load)", "", "```", other["text"], "```"]
    if results.get("notes"):
        lines += ["", "## Notes", ""] + [f"- {n}" for n in results["notes"]]
    return "\n".join(lines) + "\n"


def print_rich(results: dict[str, Any], console: Console | None = None) -> None:
    console = console or Console(width=None if Console().is_terminal else 200)
    table = Table(title=f"bench-overhead {results['date']} (median, min–max over repeats)")
    for name, _ in COLUMNS:
        table.add_column(name, overflow="fold")
    for row in point_rows(results):
        table.add_row(*row)
    console.print(table)
    targets = Table(title="targets")
    for name in ("target", "goal", "specgate", "bare proxy", "result", "note"):
        targets.add_column(name, overflow="fold")
    for row in target_rows(results):
        style = {"PASS": "green", "MISS": "red"}.get(row[4], "")
        targets.add_row(*row[:4], f"[{style}]{row[4]}[/]" if style else row[4], row[5])
    console.print(targets)
