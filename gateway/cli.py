"""`specgate` command: each subcommand lives in its own module with a `main(argv) -> int`."""

from __future__ import annotations

import importlib
import sys

COMMANDS: dict[str, tuple[str, str, str]] = {
    "serve": ("gateway.server", "main", "run the gateway (settings from SPECGATE_* env)"),
    "emulate": ("gateway.emulator.cli", "main", "run an emulated vLLM baseline + speculative pair"),
    "calibrate": ("gateway.emulator.calibrate", "main", "emulator vs real H200 measurements, side by side"),
    "workload": ("gateway.workloads.cli", "main", "generate workload files"),
    "bench": ("gateway.bench.replay.cli", "bench_main", "replay a workload through policies, write results"),
    "demo": ("gateway.bench.replay.cli", "demo_main", "the main job: is speculative decoding worth it here?"),
    "report": ("gateway.bench.report.cli", "main", "per-class report from bench results or live metrics"),
    "bench-overhead": ("gateway.bench.overhead.cli", "main", "gateway overhead vs direct and a bare proxy"),
    "evaluate": ("gateway.bench.evaluate", "main", "adaptive vs static policies over profiles × workloads"),
    "bench-decision": ("gateway.bench.decision", "main", "time of one routing decision, per policy"),
    "plan": ("gateway.bench.plan", "main", "which layout should N GPUs run for this traffic?"),
}


def usage() -> str:
    lines = ["usage: specgate COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<15} {help_}" for name, (_, _, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    if args[0] in ("-V", "--version"):
        from gateway import build

        print(build())
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"specgate: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module_name, func_name, _ = COMMANDS[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("gateway"):
            print(f"specgate {name}: not available in this build ({exc.name} missing)", file=sys.stderr)
            return 2
        raise
    result = getattr(module, func_name)(rest)
    return int(result or 0)
