"""`specgate bench` and `specgate demo`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from gateway.bench.peers.run import run_peer
from gateway.bench.peers.spec import is_peer, parse_peer_args, parse_peers
from gateway.bench.plan.quick import layout_sentence
from gateway.bench.replay.display import make_console, plot, print_tables
from gateway.bench.replay.run import (
    POLICIES,
    BenchConfig,
    default_profile,
    hindsight_map,
    policy_result,
    results_document,
    run_policy,
)
from gateway.bench.replay.verdict import class_rows, fleet_sentence, overall_sentence, sentence
from gateway.emulator import parse_layout
from gateway.workloads.items import WorkloadError, WorkloadItem, load_workload

DEMO_WORKLOAD = "demo-mixed"
DEMO_POLICIES = ("baseline", "speculative", "adaptive",  # one GPU shared by the pair
                 "least_loaded@2xbaseline", "least_loaded@2xspeculative", "adaptive@baseline+speculative")  # 2 GPUs
DEMO_TIME_SCALE = 0.3


def _bench_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="specgate bench",
                                description="Replay a workload through routing policies over an emulated pair.")
    p.add_argument("--workload", required=True, help="a workload file or a built-in name (specgate workload list)")
    p.add_argument("--policies", default="baseline,speculative,rules,adaptive",
                   help=f"comma-separated, from {', '.join(POLICIES)}")
    p.add_argument("--peers", default="",
                   help="real peer routers in front of the same emulated fleet, ROUTER:POLICY comma-separated, e.g. "
                        "vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware "
                        "(pip install -e '.[peers]'); one that fails to start is reported as all errors")
    p.add_argument("--peer-arg", action="append", default=[], metavar="ROUTER=--FLAG[=VALUE]",
                   help="an extra flag for every run of that peer router, e.g. vllm-router=--cache-threshold=0.3")
    p.add_argument("--out", type=Path, default=Path("results.json"))
    p.add_argument("--time-scale", type=float, default=1.0,
                   help="wall seconds per simulated second (<1 runs faster than real time)")
    p.add_argument("--profile", default=None, help="emulated profile (default: the emulator's default)")
    p.add_argument("--plot", type=Path, default=None, help="write a PNG plot here")
    p.add_argument("--repeat", type=int, default=1, help="run each policy this many times")
    p.add_argument("--limit", type=int, default=None, help="use only the first N requests")
    p.add_argument("--request-timeout", type=float, default=600.0,
                   help="wall seconds before a request counts as failed")
    p.add_argument("--gateway-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra SPECGATE_* settings for the gateway, e.g. SPECGATE_MARGIN=0.1")
    p.add_argument("--fleet", default=None,
                   help="emulated fleet, one entry per GPU: pair | baseline | speculative, e.g. baseline,speculative "
                        "(default: one pair). A policy may name its own fleet: least_loaded@2xbaseline")
    p.add_argument("--seed", type=int, default=1, help="SPECGATE_RANDOM_SEED for the gateway (+ repeat index)")
    p.add_argument("--gateways", type=int, default=1,
                   help="gateway processes; more than one run behind haproxy (Debian: apt-get install haproxy)")
    p.add_argument("--balance", choices=("leastconn", "roundrobin"), default="leastconn",
                   help="haproxy's algorithm with --gateways > 1")
    p.add_argument("--rolling-restart", action="store_true",
                   help="stop and start each gateway in turn while the workload runs")
    p.add_argument("--warm", choices=("none", "file", "peers"), default="none",
                   help="what a restarted gateway starts from: its priors, its own SPECGATE_STATE_FILE, "
                        "or the running gateways (SPECGATE_PEERS)")
    return p


def _advance(progress: Progress, task: TaskID) -> Callable[[], None]:
    return lambda: progress.advance(task)


async def run_bench(items: Sequence[WorkloadItem], config: BenchConfig, console: Console,
                    command: Sequence[str]) -> dict[str, Any]:
    results: dict[str, Any] = {}
    progress = Progress(TextColumn("{task.description:>14}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        console=console, transient=False)
    with progress:
        for policy in sorted(config.policies, key=lambda p: p.startswith("hindsight")):  # hindsight needs the rest
            if policy.startswith("hindsight"):
                config.hindsight_map = hindsight_map({name: r["requests"] for name, r in results.items()})
            runs = []
            for rep in range(config.repeat):
                label = policy if config.repeat == 1 else f"{policy} #{rep + 1}"
                task = progress.add_task(label, total=len(items))
                run = run_peer if is_peer(policy) else run_policy
                runs.append(await run(items, policy, config, _advance(progress, task),
                                      repeat=rep + 1 if config.repeat > 1 else 0))
            results[policy] = policy_result(runs, config.time_scale)
            if is_peer(policy):
                results[policy]["peer"] = [r["peer"] for r in runs]
    return results_document(config, items, results, command)


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _parse_env(pairs: Sequence[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.startswith("SPECGATE_"):
            raise ValueError(f"--gateway-env expects SPECGATE_KEY=VALUE, got {pair!r}")
        env[key] = value
    return env


def _execute(items: Sequence[WorkloadItem], config: BenchConfig, out: Path, plot_path: Path | None,
             console: Console, command: Sequence[str]) -> dict[str, Any]:
    started = time.perf_counter()
    with asyncio.Runner(loop_factory=_loop_factory()) as runner:
        doc = runner.run(run_bench(items, config, console, command))
    doc["bench_wall_s"] = round(time.perf_counter() - started, 1)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1))
    if plot_path is not None:
        plot(doc, plot_path)
    return doc


def bench_main(argv: list[str]) -> int:
    args = _bench_parser().parse_args(argv)
    console = make_console()
    try:
        items = load_workload(args.workload)[: args.limit]
        policies = [p.strip() for p in args.policies.split(",") if p.strip()]
        unknown = [p for p in policies if not is_peer(p) and p.partition("@")[0] not in POLICIES]
        policies += [peer.name for peer in parse_peers(args.peers)]
        parse_peers(",".join(p for p in policies if is_peer(p)))
        if unknown or not policies:
            raise ValueError(f"unknown policies {unknown}; choose from {', '.join(POLICIES)}")
        if args.time_scale <= 0 or args.repeat < 1 or args.gateways < 1:
            raise ValueError("--time-scale must be > 0, --repeat >= 1 and --gateways >= 1")
        env = _parse_env(args.gateway_env)
        peer_args = parse_peer_args(args.peer_arg)
        fleet = None if args.fleet is None else parse_layout(args.fleet)
        for p in policies:
            if "@" in p and not is_peer(p):
                parse_layout(p.partition("@")[2].replace("+", ","))
    except (ValueError, WorkloadError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    work_dir = args.out.parent / f"{args.out.stem}-logs"
    work_dir.mkdir(parents=True, exist_ok=True)
    config = BenchConfig(workload_name=args.workload, policies=policies, profile=args.profile or default_profile(),
                         time_scale=args.time_scale, repeat=args.repeat, work_dir=work_dir, gateway_env=env,
                         timeout_s=args.request_timeout, fleet=fleet, seed=args.seed, gateways=args.gateways,
                         balance=args.balance, rolling_restart=args.rolling_restart, warm=args.warm,
                         peer_args=peer_args)
    doc = _execute(items, config, args.out, args.plot, console, ["specgate", "bench", *argv])
    print_tables(doc, console)
    for name, result in doc["policies"].items():
        for peer in result.get("peer", []):
            if not peer["started"]:
                console.print(f"[red]{name}: {peer['error']}[/red]")
            elif peer.get("request_ids_seen", 1.0) < 1.0:
                console.print(f"[yellow]{name}: only {peer['request_ids_seen']:.0%} of the request ids reached the "
                              "emulator (x-request-id not forwarded)[/yellow]")
        runs = result.get("runs", [])
        if len(runs) > 1:
            means = [r["mean_e2e_s"] for r in runs if r["mean_e2e_s"] is not None]
            shares = [r["speculative_share"] for r in runs if r["speculative_share"] is not None]
            console.print(f"{name}: {len(runs)} seeds, mean {min(means):.3f}-{max(means):.3f} s, "
                          f"to speculative {min(shares):.0%}-{max(shares):.0%}")
    console.print(overall_sentence(doc))
    console.print(f"results: {args.out}" + (f"  plot: {args.plot}" if args.plot else "")
                  + f"  gateway logs: {config.work_dir}  ({doc['bench_wall_s']} s)")
    return 0 if all(p["summary"]["errors"] == 0 for p in doc["policies"].values()) else 1


def _demo_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="specgate demo",
                                description="Is speculative decoding worth it for this traffic, and does routing help?")
    p.add_argument("--out-dir", type=Path, default=Path("specgate-demo"))
    p.add_argument("--workload", default=DEMO_WORKLOAD)
    p.add_argument("--profile", default=None)
    p.add_argument("--policies", default=",".join(DEMO_POLICIES))
    p.add_argument("--time-scale", type=float, default=DEMO_TIME_SCALE)
    return p


def demo_main(argv: list[str]) -> int:
    args = _demo_parser().parse_args(argv)
    console = make_console()
    profile = args.profile or default_profile()
    items = load_workload(args.workload)
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    console.print(f"[bold]specgate demo[/bold]: {len(items)} requests of mixed traffic ({args.workload}) through "
                  f"{', '.join(policies)} on an emulated baseline + speculative vLLM pair sharing one GPU ({profile}), "
                  f"and on two GPUs with a server each (policy@fleet), time scale {args.time_scale}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    config = BenchConfig(workload_name=args.workload, policies=policies, profile=profile,
                         time_scale=args.time_scale, work_dir=args.out_dir / "logs")
    config.work_dir.mkdir(parents=True, exist_ok=True)
    out, plot_path = args.out_dir / "results.json", args.out_dir / "latency.png"
    doc = _execute(items, config, out, plot_path, console, ["specgate", "demo", *argv])
    print_tables(doc, console)
    console.print("[bold]Verdict per task class[/bold]")
    for row in class_rows(doc):
        console.print(f"  {row['class']:>12}: {sentence(row)}")
    console.print(f"[bold]{overall_sentence(doc)}[/bold]")
    fleet = fleet_sentence(doc)
    if fleet:
        console.print(f"[bold]{fleet}[/bold]")
    if advice := layout_sentence(args.workload, profile):
        console.print(advice)
    console.print(f"results: {out}\nplot:    {plot_path}\nreport:  specgate report {out} --html "
                  f"{args.out_dir / 'report.html'}   ({doc['bench_wall_s']} s)")
    return 0


if __name__ == "__main__":
    sys.exit(bench_main(sys.argv[1:]))
