"""`specgate workload generate|list|stats|build-builtin`, and `specgate workload --from-trace SOURCE FILE`."""

from __future__ import annotations

import argparse
import statistics
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gateway.workloads.arrivals import parse_phases
from gateway.workloads.builtins import BUILTINS, build_builtins
from gateway.workloads.family import FAMILIES, describe, member
from gateway.workloads.generate import MIXES, Arrival, generate
from gateway.workloads.items import WorkloadError, builtin_names, load_workload, write_workload
from gateway.workloads.task import KIND_CLASS, approx_tokens


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="specgate workload", description="Generate and inspect workload files "
                                     "(or build one from a production trace: specgate workload --from-trace -h).")
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write a workload file (JSON Lines)")
    gen.add_argument("--mix", default="mixed",
                     help=f"a named mix ({', '.join(MIXES)}) or weights like 'chat=2,sql=1,creative=1'")
    gen.add_argument("--n", type=int, default=300, help="number of requests")
    gen.add_argument("--rate", type=float, default=1.0, help="Poisson rate, requests per second")
    gen.add_argument("--phases", help="phases of load 'DURATION:RATE,...' (seconds:requests per second), cycled")
    gen.add_argument("--bursts", help="bursts on top of the Poisson rate: 'EVERY_S:SIZE[:WIDTH_S]'")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--family", choices=FAMILIES,
                     help="draw member SEED of a generated family of unseen traces (ignores --mix/--n/--rate)")
    gen.add_argument("--out", required=True, type=Path)
    sub.add_parser("list", help="the built-in workloads")
    stats = sub.add_parser("stats", help="summarise a workload file or built-in")
    stats.add_argument("workload")
    build = sub.add_parser("build-builtin", help="regenerate the built-in workload files")
    build.add_argument("--dir", type=Path, default=Path(__file__).parent / "builtin")
    return parser


def _arrival(args: argparse.Namespace) -> Arrival:
    if args.phases and args.bursts:
        raise ValueError("use --phases or --bursts, not both")
    if args.phases:
        return Arrival("phases", plan=tuple(parse_phases(args.phases)))
    if args.bursts:
        parts = [float(x) for x in args.bursts.split(":")]
        if len(parts) not in (2, 3):
            raise ValueError("--bursts is EVERY_S:SIZE[:WIDTH_S]")
        width = parts[2] if len(parts) == 3 else 0.5
        return Arrival("bursts", rate=args.rate, burst_every_s=parts[0], burst_size=int(parts[1]), burst_width_s=width)
    return Arrival(rate=args.rate)


def _stats(name: str, console: Console) -> None:
    items = load_workload(name)
    kinds = Counter(item.kind or "?" for item in items)
    span = items[-1].t - items[0].t if len(items) > 1 else 0.0
    console.print(f"{name}: {len(items)} requests over {span:.1f} s "
                  f"(mean rate {len(items) / span if span else 0:.2f}/s)")
    table = Table("kind", "class (intended)", "requests", "mean prompt chars", "mean reference tokens")
    for kind, count in sorted(kinds.items()):
        group = [i for i in items if (i.kind or "?") == kind]
        prompt = statistics.fmean(len(str(i.body.get("messages") or i.body.get("prompt"))) for i in group)
        ref = statistics.fmean(approx_tokens(i.reference or "") for i in group)
        table.add_row(kind, KIND_CLASS.get(kind, "?"), str(count), f"{prompt:.0f}", f"{ref:.0f}")
    console.print(table)


def main(argv: list[str]) -> int:
    if any(a == "--from-trace" or a.startswith("--from-trace=") for a in argv):
        from gateway.workloads.trace_cli import main as trace_main

        return trace_main(argv)
    args = _parser().parse_args(argv)
    console = Console()
    try:
        if args.command == "generate" and args.family:
            items = member(args.seed)
            write_workload(items, args.out)
            console.print(f"wrote {len(items)} requests to {args.out}: {describe(args.seed)}")
        elif args.command == "generate":
            items = generate(args.n, args.mix, _arrival(args), seed=args.seed)
            write_workload(items, args.out)
            console.print(f"wrote {len(items)} requests to {args.out} (last send time {items[-1].t:.1f} s)")
        elif args.command == "list":
            about = {spec.name: spec.about for spec in BUILTINS}
            for name in builtin_names():
                console.print(f"{name:18} {about.get(name, '')}")
        elif args.command == "stats":
            _stats(args.workload, console)
        else:
            for path in build_builtins(args.dir):
                console.print(f"wrote {path}")
    except (ValueError, WorkloadError, OSError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    return 0
