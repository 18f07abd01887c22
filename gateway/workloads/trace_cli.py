"""`specgate workload --from-trace azure-code|azure-conv|burstgpt|mooncake FILE [--window START:SECONDS]
[--rate-scale X] [--mix ...] --out W.jsonl`: a workload with a real trace's arrivals and token counts."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from gateway.workloads.generate import MIXES
from gateway.workloads.items import WorkloadError, write_workload
from gateway.workloads.trace_content import build_items
from gateway.workloads.traces import SOURCES, TraceError, describe, parse_window, read_trace, select


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="specgate workload --from-trace",
                                description="Build a workload from a public production trace: its arrival times and "
                                            "token counts, content from the project's generators sized to them.")
    p.add_argument("--from-trace", nargs=2, required=True, metavar=("SOURCE", "FILE"),
                   help=f"the trace's format ({', '.join(SOURCES)}) and its file (docs/emulator.md: how to get them)")
    p.add_argument("--window", default=None, metavar="START:SECONDS",
                   help="seconds from the trace's first request: START:SECONDS (default: the whole trace)")
    p.add_argument("--rate-scale", type=float, default=1.0,
                   help="multiply the arrival rate (0.5: the same requests over twice the time), to fit the window "
                        "to the emulated fleet's capacity")
    p.add_argument("--mix", default=None,
                   help=f"class shares, a named mix ({', '.join(MIXES)}) or weights 'chat=2,sql=1' (default: the "
                        "trace's own kind: Azure code -> code/structured, conv -> chat/creative, BurstGPT by Log Type)")
    p.add_argument("--max-requests", type=int, default=None, help="keep at most the first N requests of the window")
    p.add_argument("--max-context", type=int, default=32768,
                   help="clip prompt + output to the served model's context (the emulator's default: 32768)")
    p.add_argument("--seed", type=int, default=0, help="seed of the content (the trace fixes times and lengths)")
    p.add_argument("--out", type=Path, required=True)
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    console = Console()
    source, path = args.from_trace
    try:
        trace = read_trace(source, Path(path).read_text(encoding="utf-8"))
        start, seconds = parse_window(args.window)
        rows = select(trace.rows, start, seconds, args.rate_scale, args.max_requests)
        if not rows:
            raise TraceError(f"no request of {path} in the window {args.window!r}")
        items, sizing = build_items(source, rows, args.mix, args.seed, args.max_context)
        write_workload(items, args.out)
    except (OSError, ValueError, WorkloadError, TraceError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    stats = describe(rows)
    console.print(f"{source}: {trace.read} rows read, {len(trace.rows)} kept"
                  + (f" (dropped {json.dumps(trace.dropped)})" if trace.dropped else ""))
    console.print(f"wrote {len(items)} requests to {args.out}: {json.dumps(stats)}")
    console.print(f"kinds {json.dumps(dict(sorted(sizing.kinds.items())))}; prompts cut to the trace's length: "
                  f"{sizing.prompt_cut}; clipped to the context limit: {sizing.context_clipped}")
    return 0
