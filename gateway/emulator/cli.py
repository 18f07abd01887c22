"""`specgate emulate`: run an emulated baseline + speculative vLLM pair until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys

from gateway.workloads.items import load_workload

from .fleet import EmulatedFleet, parse_layout
from .pair import EmulatedPair
from .profiles import PROFILES


def load_references(path: str) -> tuple[dict[str, str], dict[str, float]]:
    """{id: reference} and {id: synthetic tokens per step} from a workload file (`WorkloadItem` lines)."""
    items = load_workload(path)
    return ({i.id: i.reference for i in items if i.reference is not None},
            {i.id: i.tokens_per_step for i in items if i.tokens_per_step is not None})


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="specgate emulate", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--baseline-port", type=int, default=8001)
    p.add_argument("--speculative-port", type=int, default=8002)
    p.add_argument("--profile", default="h200-ngram", choices=sorted(PROFILES))
    p.add_argument("--time-scale", type=float, default=1.0, help="real seconds per simulated second")
    p.add_argument("--model", default="specgate-emu",
                   help="served model name; with --fleet, one per entry, comma-separated (the last repeats)")
    p.add_argument("--lora", action="append", default=[], metavar="NAME=BASE",
                   help="serve LoRA adapter NAME beside base model BASE (listed in /v1/models; repeatable)")
    p.add_argument("--workload", help="JSONL workload file whose references to preload")
    p.add_argument("--synthetic-acceptance-length", type=float, default=None,
                   help="mean tokens per speculative step, like vLLM's synthetic rejection sampler")
    p.add_argument("--load-format", choices=("auto", "dummy"), default="auto",
                   help="dummy: generate what random weights would (greedy output cycles, sampled output never "
                        "repeats, EOS never comes), like `vllm serve --load-format dummy`; references are ignored")
    p.add_argument("--fleet", default=None,
                   help="one entry per simulated GPU: pair | baseline | speculative (e.g. 'pair' or "
                        "'baseline,speculative' or '2xbaseline,2xspeculative'); ports count up from --baseline-port")
    return p


async def _serve_fleet(args: argparse.Namespace, stop: asyncio.Event) -> None:
    layout = parse_layout(args.fleet)
    servers = sum(2 if e == "pair" else 1 for e in layout)
    names = [m.strip() for m in args.model.split(",") if m.strip()] or ["specgate-emu"]
    adapters: dict[str, list[str]] = {}
    for spec in args.lora:
        name, _, base = spec.partition("=")
        adapters.setdefault(base or names[0], []).append(name)
    fleet = EmulatedFleet(layout, profile=args.profile, host=args.host, time_scale=args.time_scale,
                          model_name=names[-1], synthetic_acceptance_length=args.synthetic_acceptance_length,
                          load_format=args.load_format, ports=[args.baseline_port + i for i in range(servers)],
                          models=names, adapters=adapters)
    if args.workload:
        refs, acceptance = load_references(args.workload)
        fleet.register_references(refs)
        fleet.register_acceptance(acceptance)
    async with fleet:
        lines = "\n".join(f"  {s.role:<12}{s.url}  ({s.group}, {s.server.model_name})" for s in fleet.servers)
        print(f"specgate emulate: fleet {args.fleet}, profile {args.profile}, model {args.model!r}, "
              f"time scale {args.time_scale}\n{lines}\n"
              f"  gateway: SPECGATE_BACKENDS={fleet.backends_setting()}", flush=True)
        await stop.wait()


async def _serve(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    if args.fleet:
        await _serve_fleet(args, stop)
        return
    pair = EmulatedPair(
        profile=args.profile, host=args.host, baseline_port=args.baseline_port,
        speculative_port=args.speculative_port, time_scale=args.time_scale, model_name=args.model,
        synthetic_acceptance_length=args.synthetic_acceptance_length, load_format=args.load_format,
    )
    if args.workload:
        refs, acceptance = load_references(args.workload)
        pair.register_references(refs)
        pair.register_acceptance(acceptance)
    async with pair:
        print(f"specgate emulate: profile {args.profile}, model {args.model!r}, time scale {args.time_scale}, "
              f"load format {args.load_format}\n"
              f"  baseline    {pair.baseline_url}\n  speculative {pair.speculative_url}\n"
              f"  references  {len(pair.references)}", flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.time_scale <= 0:
        print("--time-scale must be > 0", file=sys.stderr)
        return 2
    if args.fleet:
        try:
            parse_layout(args.fleet)
        except ValueError as exc:
            print(f"specgate emulate: {exc}", file=sys.stderr)
            return 2
    try:
        asyncio.run(_serve(args))
    except OSError as exc:
        print(f"specgate emulate: {exc}", file=sys.stderr)
        return 1
    return 0
