"""`specgate bench-overhead`: what the gateway costs, side by side with the backend directly and a bare proxy.

Starts two zero-delay vLLM-compatible backends (baseline and speculative roles), a bare ~60-line aiohttp
pass-through proxy (the floor), specgate itself (`python -m gateway serve`, default adaptive policy,
metrics and headers on) and LiteLLM's proxy when `litellm` is importable, then drives each with a
closed-loop load generator in its own process: non-streaming and streaming (64 chunks), concurrency
1, 16, 64, 256, repeated. Targets are measured back to back within each repeat.

Pinning (2+ CPUs): proxies and the gateway run on the last CPU, the load generator and the backends on
the others, so the gateway's CPU is its own and the client side is identical for every target.

    specgate bench-overhead                 # full run, ~10 minutes on 2 cores
    specgate bench-overhead --quick         # small counts, one repeat
    specgate bench-overhead --workers 2     # also 1 vs 2 gateway processes (SO_REUSEPORT)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import orjson

from gateway.bench.overhead import report
from gateway.bench.overhead.bench import BASE_PROMPTS, PATHS, progress, prompt_text, running
from gateway.bench.overhead.profile import profile
from gateway.bench.overhead.stats import evaluate
from gateway.bench.overhead.workers import measure_workers

RESULTS_DIR = Path("results")  # the repository's results/, run from its root


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="specgate bench-overhead", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small counts, 1 repeat, short RSS tests")
    p.add_argument("--concurrency", default="1,16,64,256", help="comma-separated closed-loop concurrencies")
    p.add_argument("--modes", default="plain,stream", help="plain (non-streaming) and/or stream")
    p.add_argument("--requests", type=int, default=2000, help="measured requests per point at c >= 16")
    p.add_argument("--requests-c1", type=int, default=1000, help="measured requests per point at c = 1")
    p.add_argument("--warmup", type=int, default=200, help="unmeasured requests before each point")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--chunks", type=int, default=64, help="content chunks per streamed response")
    p.add_argument("--endpoint", choices=sorted(PATHS), default="chat")
    p.add_argument("--prompt-chars", type=int, default=0,
                   help="pad the prompt with prose to this many characters (the classifier reads it all)")
    p.add_argument("--include-usage", action="store_true",
                   help="clients ask for stream_options.include_usage (default: they don't; the gateway adds it "
                        "and strips the usage event, its costlier path)")
    p.add_argument("--targets", default="direct,bare-proxy,specgate,litellm",
                   help="subset of direct,bare-proxy,specgate,litellm (litellm only if importable)")
    p.add_argument("--open-streams", type=int, default=1000, help="concurrent open streams for the RSS test (0: skip)")
    p.add_argument("--open-stream-delay-s", type=float, default=0.1, help="backend delay between chunks then")
    p.add_argument("--long-requests", type=int, default=40000, help="requests for the long-run RSS test (0: skip)")
    p.add_argument("--workers", type=int, default=0, help="also compare 1 vs N gateway processes (0: skip)")
    p.add_argument("--profile", action="store_true", help="py-spy the gateway under load (needs py-spy)")
    p.add_argument("--profile-seconds", type=float, default=20.0)
    p.add_argument("--profile-concurrency", type=int, default=64, help="closed-loop concurrency while profiling")
    p.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    p.add_argument("--nice", type=int, default=0,
                   help="niceness for every benchmark process (e.g. -5 as root on a shared, busy machine)")
    p.add_argument("--gateway-env", action="append", default=[], metavar="K=V",
                   help="extra environment for specgate (e.g. SPECGATE_LOG_REQUESTS=false)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:K=V[,K=V]",
                   help="an extra specgate target with more environment, e.g. nolog:SPECGATE_LOG_REQUESTS=false")
    p.add_argument("--fleet", type=int, default=0, metavar="N",
                   help="also a specgate target with N backends (N/2 pairs, each server's URL repeated): the cost of "
                        "routing over a fleet")
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--tag", default="", help="suffix for the results file name")
    p.add_argument("--from-json", type=Path, metavar="FILE",
                   help="measure nothing: re-evaluate the targets of a results file, rewrite its .md, print it")
    args = p.parse_args(argv)
    if args.quick:
        args.requests, args.requests_c1, args.warmup, args.repeats = min(args.requests, 300), min(
            args.requests_c1, 100), min(args.warmup, 30), 1
        args.open_streams, args.long_requests = min(args.open_streams, 200), min(args.long_requests, 2000)
        args.open_stream_delay_s = min(args.open_stream_delay_s, 0.02)
        args.profile_seconds = min(args.profile_seconds, 5.0)
    return args


def machine_info() -> dict[str, Any]:
    model = platform.processor() or "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"nproc": os.cpu_count(), "cpu_model": model, "python": platform.python_version(),
            "platform": platform.platform()}


def git_state() -> dict[str, Any]:
    """The commit measured and the gateway files that differed from it (others may be editing)."""
    root = Path(__file__).resolve().parents[3]

    def git(*cmd: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(root), *cmd], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = [line.split(None, 1)[1] for line in git("status", "--porcelain", "--", "gateway").splitlines()
             if line.strip() and not line.startswith("??")]
    return {"commit": git("rev-parse", "--short", "HEAD"), "modified": dirty}


def uptime() -> str:
    load = os.getloadavg()
    return f"load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}"


def write_results(results: dict[str, Any], json_path: Path) -> None:
    results["targets_eval"] = evaluate(results["points"], results["rss"], results["workers"])
    json_path.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    json_path.with_suffix(".md").write_text(report.markdown(results))
    report.print_rich(results)
    print(f"results: {json_path} and {json_path.with_suffix('.md')}")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.from_json:
        write_results(orjson.loads(args.from_json.read_bytes()), args.from_json)
        return 0
    now = dt.datetime.now()
    stamp = now.strftime("%Y-%m-%d") + (f"-{args.tag}" if args.tag else "")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    results: dict[str, Any] = {
        "date": now.isoformat(timespec="seconds"), "machine": machine_info(),
        "command": "specgate bench-overhead " + shlex.join(argv), "load": {"before": uptime()}, "git": git_state(),
    }
    with running(args) as bench:
        bench.start_backends()
        bench.start_targets()
        results["config"] = {"pinning": bench.pinning, "requests": args.requests, "requests_c1": args.requests_c1,
                             "warmup": f"max({args.warmup}, c)", "repeats": args.repeats, "chunks": args.chunks,
                             "endpoint": PATHS[args.endpoint], "include_usage": args.include_usage,
                             "prompt_chars": len(prompt_text(BASE_PROMPTS[args.endpoint], args.prompt_chars)),
                             "concurrency": concurrencies, "targets": [t.name for t in bench.targets],
                             "gateway_env": args.gateway_env, "nice": args.nice}
        bench.notes.append("specgate runs with its default settings (adaptive policy, metrics, headers, JSON access "
                           "log line per request written to a file) plus --gateway-env: "
                           + (", ".join(args.gateway_env) or "none"))
        results["builds"] = bench.builds
        results["points"] = bench.measure_points(bench.targets, concurrencies)
        proxied = [t for t in bench.targets if t.proc is not None]
        rss: dict[str, Any] = {"open_streams": {}, "long_run": {}}
        gateway = next((t for t in bench.targets if t.name == "specgate"), None)
        if args.long_requests and gateway is not None:
            rss["long_run"][gateway.name] = bench.long_run(gateway)
            progress(f"long run: {rss['long_run'][gateway.name]['series']}")
        if args.open_streams:
            for t in proxied:
                rss["open_streams"][t.name] = bench.open_streams(t)
                progress(f"open streams {t.name}: {rss['open_streams'][t.name]}")
        results["rss"] = rss
        results["profile"] = profile(bench, gateway, args.out_dir, stamp) if args.profile and gateway else None
        if args.profile and results["profile"] is not None:  # the others too, for µs per request side by side
            results["profiles"] = {t.name: profile(bench, t, args.out_dir, stamp) for t in proxied if t is not gateway}
        results["workers"] = measure_workers(bench, args.workers) if args.workers > 1 else None
        results["notes"] = bench.notes
    results["load"]["after"] = uptime()
    write_results(results, args.out_dir / f"overhead-{stamp}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
