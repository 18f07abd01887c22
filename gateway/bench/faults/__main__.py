"""`python -m gateway.bench.faults`: the gateway under injected faults, as real processes on 127.0.0.1.

For each fault (kill a backend, hang, garbage and truncated SSE, 500 half the time, client disconnects)
a fresh pair of fault-injecting backends and a fresh `python -m gateway serve` take a bounded closed-loop
load; the fault starts one second in. Every request ends in one class:

- completed: 200 and a whole answer (`[DONE]` for streams, a JSON completion otherwise)
- failed over: completed, but on the other backend after the first attempt failed (x-specgate-reason)
- cut mid-stream: the stream had started, then ended with an SSE error event (not retryable by design)
- failed: anything else (an error status, a broken answer); these are requests lost that could be retried

Then a soak: steady load for `--soak-s` seconds with a share of clients that leave early, sampling the
gateway's RSS, TCP connections and file descriptors (psutil) before, during and after.
Then (`--hostile-s`) a hostile client mixed into benign load against the emulated pair, compared with
the same load alone (gateway/bench/faults/hostile.py).
Writes `results/faults-<date>.json` and `.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import sys
from pathlib import Path
from typing import Any

import orjson

from gateway.bench.faults.backend import serve_backend
from gateway.bench.faults.markdown import machine, render_md
from gateway.bench.faults.scenarios import SCENARIOS, abort_latency, run_scenario, soak
from gateway.bench.faults.system import GATEWAY_ENV

RESULTS = Path("results")  # the repository's results/, run from its root


async def run(args: argparse.Namespace) -> dict[str, Any]:
    log_dir = Path(args.log_dir)
    names = [] if args.scenarios == "none" else args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
    result: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": machine(),
                              "command": " ".join(["python -m gateway.bench.faults", *sys.argv[1:]]),
                              "gateway_env": GATEWAY_ENV, "scenarios": []}
    for name in names:
        s = await run_scenario(name, args.seconds, args.concurrency, log_dir)
        print(f"{name:<20} sent {s['sent']:>5}  completed {s['completed']:>5}  failed over {s['failed_over']:>4}  "
              f"cut {s['cut_mid_stream']:>4}  failed {s['failed']:>3}  left {s['client_aborted']:>4}", flush=True)
        result["scenarios"].append(s)
    if not args.skip_abort_latency and names:
        result["abort_latency"] = await abort_latency(log_dir)
        print("abort latency", result["abort_latency"], flush=True)
    if args.hostile_s > 0:
        from gateway.bench.faults.hostile import hostile_comparison

        attacks = args.hostile_attacks.split(",") if args.hostile_attacks else None
        result["hostile"] = await hostile_comparison(log_dir, args.hostile_s, args.concurrency, attacks)
    if args.soak_s > 0:
        result["soak"] = await soak(args.soak_s, args.concurrency, log_dir)
        s = result["soak"]
        print(f"soak {args.soak_s:.0f}s: sent {s['sent']} failed {s['failed']} rss {s['before']['rss_mb']} -> "
              f"{s['after']['rss_mb']} MB, conns {s['before']['tcp_connections']} -> "
              f"{s['after']['tcp_connections']}, fds {s['before']['fds']} -> {s['after']['fds']}", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.bench.faults", description=__doc__.split("\n")[0])
    parser.add_argument("--soak-s", type=float, default=600.0, help="soak duration (0 to skip)")
    parser.add_argument("--seconds", type=float, default=6.0, help="load duration of each fault scenario")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--scenarios", default="", help="comma-separated subset of: " + ",".join(SCENARIOS)
                        + " (none: no fault scenario)")
    parser.add_argument("--hostile-s", type=float, default=300.0,
                        help="length of each run of the hostile-client comparison (0 to skip)")
    parser.add_argument("--hostile-attacks", default="", help="comma-separated subset of the hostile attacks "
                        "(default: all; see gateway/bench/faults/hostile.py ATTACKS and slowloris)")
    parser.add_argument("--skip-abort-latency", action="store_true")
    parser.add_argument("--out", default="", help="output path stem (default results/faults-<date>)")
    parser.add_argument("--log-dir", default="/tmp/specgate-faults-logs")
    parser.add_argument("--serve-backend", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_backend:
        asyncio.run(serve_backend())
        return 0
    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    result = asyncio.run(run(args))
    stem = Path(args.out) if args.out else RESULTS / f"faults-{dt.date.today().isoformat()}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    stem.with_suffix(".md").write_text(render_md(result))
    print(f"wrote {stem.with_suffix('.json')} and .md")
    hostile = result.get("hostile", {}).get("hostile")
    hostile_ok = hostile is None or (hostile["benign_success_rate"] == 1.0 and hostile["ejections"] == 0)
    return 0 if all(s["failed"] == 0 for s in result["scenarios"]) and hostile_ok else 1


if __name__ == "__main__":
    sys.exit(main())
