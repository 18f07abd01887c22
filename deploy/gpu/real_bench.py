"""Replay workloads through specgate in front of a running baseline + speculative pair (real vLLM or the emulator).

For each policy: start `python -m gateway serve` (fresh learner), replay a low-load phase (Poisson arrivals)
then a high-load phase (closed loop, c concurrent streams), read the gateway's /admin/state and /metrics and the
backends' spec-decode counters, stop the gateway. Optionally replay the low phase directly against each backend
first (reference latencies without the gateway). Everything goes to --out (flat, at most 8 files):
results.json, summary.md, requests.jsonl, logs.txt (+ what run_real.sh adds).

Stdlib + aiohttp (+ the gateway package itself for the workload reader and the streaming client). This file
runs the phases; beside it: `bench_workload.py` (the requests), `bench_load.py` (open and closed loops),
`bench_probe.py` (what the servers say), `bench_gateway.py` (the gateway process), `bench_summary.py`
(summaries, the table, what goes to --out).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench_gateway import Gateway
from bench_load import closed_loop, run_phase
from bench_probe import counters_by, extract_learned, histogram, http_get, spec_counters, wait_ok
from bench_summary import Record, fmt, log, summarize
from bench_workload import adapt, make_counter, poisson_schedule, with_nonce

from gateway.bench.replay.client import Measured
from gateway.workloads import WorkloadItem, load_workload


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline-url", default="http://127.0.0.1:8001")
    p.add_argument("--speculative-url", default="http://127.0.0.1:8002")
    p.add_argument("--model", default="target")
    p.add_argument("--label", default="real-h200-ngram")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--policies", default="baseline,speculative,rules,adaptive")
    p.add_argument("--low-workload", default="mixed-low")
    p.add_argument("--high-workload", default="mixed-high")
    p.add_argument("--low-rate", type=float, default=1.5,
                   help="Poisson arrivals per second in the low phase (0: the workload's own arrivals, a trace)")
    p.add_argument("--low-duration", type=float, default=36.0)
    p.add_argument("--high-conc", type=int, default=48)
    p.add_argument("--high-n", type=int, default=240, help="0: no high phase")
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--max-model-len", type=int, default=8192)
    p.add_argument("--tokenizer", default="/tmp/models/target/tokenizer.json")
    p.add_argument("--keep-structured", action="store_true", help="keep response_format/tools (off: dummy weights)")
    p.add_argument("--single", help="NAME=URL: one server alone, no gateway (its low and high phases sent to it)")
    p.add_argument("--direct", action="store_true", help="replay the low phase directly to each backend first")
    p.add_argument("--direct-duration", type=float, default=20.0)
    p.add_argument("--warmup", type=int, default=4, help="direct warm-up requests per backend")
    p.add_argument("--gateway-port", type=int, default=8000)
    p.add_argument("--gateway-env", action="append", default=[], help="extra KEY=VALUE for the gateway")
    p.add_argument("--num-speculative-tokens", type=int, default=4)
    p.add_argument("--configured-acceptance", type=float, default=None)
    p.add_argument("--budget-s", type=float, default=420.0, help="stop starting new work after this many seconds")
    p.add_argument("--request-timeout-s", type=float, default=120.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--meta", action="append", default=[], help="KEY=VALUE recorded in results.meta")
    return p.parse_args(argv)


@dataclass(frozen=True)
class Phases:
    """The requests of each phase, adapted to the served model; warm-up requests are the last of the high workload."""

    low: list[WorkloadItem]
    high: list[WorkloadItem]
    warm: list[WorkloadItem]
    low_dropped: int
    high_dropped: int


def prepare(args: argparse.Namespace) -> tuple[Phases, dict[str, Any]]:
    """The phases' requests and the run's metadata (results.meta)."""
    counter, counter_kind = make_counter(args.tokenizer)
    low_all, low_drop = adapt(load_workload(args.low_workload), args, counter)
    high_all, high_drop = adapt(load_workload(args.high_workload), args, counter)
    low = poisson_schedule(low_all, args.low_rate, args.low_duration, args.seed)
    high = high_all[: args.high_n]
    meta: dict[str, Any] = {
        "label": args.label, "target": f"{args.baseline_url} + {args.speculative_url}", "argv": sys.argv,
        "low": {"workload": args.low_workload, "rate": args.low_rate, "duration_s": args.low_duration, "n": len(low),
                "dropped_too_long": low_drop},
        "high": {"workload": args.high_workload, "conc": args.high_conc, "n": len(high), "dropped_too_long": high_drop},
        "max_tokens_cap": args.max_tokens, "ignore_eos": True, "structured_fields_kept": args.keep_structured,
        "token_counter": counter_kind, "configured_acceptance": args.configured_acceptance,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    for kv in args.meta:
        k, _, v = kv.partition("=")
        meta[k] = v
    warm = high_all[-args.warmup:] if args.warmup else []
    return Phases(low, high, warm, low_drop, high_drop), meta


def counters(url: str) -> dict[str, float]:
    return spec_counters(http_get(url + "/metrics")[1])


def measure(kind: str, items: list[WorkloadItem], url: str, counted_url: str, args: argparse.Namespace,
            deadline: float) -> tuple[list[Measured], float, dict[str, float]]:
    """One phase sent to `url`: its rows, wall time and the change of `counted_url`'s spec-decode counters."""
    before = counters(counted_url)
    rows, wall = asyncio.run(run_phase(kind, items, url, args, deadline))
    after = counters(counted_url)
    return rows, wall, {k: after[k] - before[k] for k in after}


def add_acceptance_length(run: dict[str, Any]) -> None:
    d = run["vllm_spec_delta"]
    if d["drafts"]:
        run["vllm_mean_acceptance_length"] = 1 + d["accepted"] / d["drafts"]


def warm_up(name: str, url: str, items: list[WorkloadItem], args: argparse.Namespace, record: Record,
            deadline: float) -> list[Measured]:
    """First requests after a start pay for lazy initialisation: sent, summarised apart, not counted."""
    rows = asyncio.run(closed_loop(items, url, args.model, len(items), args.request_timeout_s, deadline))
    record.results.setdefault("warmup", {})[name] = summarize(rows, 1.0)
    return rows


def healthy(url: str, fatal: str, record: Record) -> bool:
    """Whether `url` answers /health within 30 s; if not, `fatal` is recorded."""
    if wait_ok(url + "/health", 30):
        return True
    record.results["fatal"] = fatal
    record.save()
    return False


def run_single(args: argparse.Namespace, phases: Phases, record: Record, deadline: float) -> int:
    """One server alone on the GPU (no gateway): warm-up (discarded), then the low and high phases sent to it."""
    name, _, url = args.single.partition("=")
    if not healthy(url, f"{name} {url} not healthy", record):
        return 1
    if phases.warm:
        rows = warm_up(name, url, with_nonce(phases.warm, f"warm-{name}"), args, record, deadline)
        log(f"warm-up {name}: {[r.status for r in rows]}")
    for phase, items in (("low", phases.low), ("high", phases.high)):
        if not items:
            continue
        if time.monotonic() > deadline:
            record.results.setdefault("skipped", []).append(f"{name}-{phase}")
            continue
        rows, wall, delta = measure(phase, with_nonce(items, f"{name}-{phase}"), url, url, args, deadline)
        record.rows(rows, "single", f"{phase}-{name}")
        run: dict[str, Any] = {"policy": "single", "direct_target": name, "phase": phase,
                               "summary": summarize(rows, wall), "vllm_spec_delta": delta}
        add_acceptance_length(run)
        s = run["summary"]
        log(f"single {name} {phase}: ok {s['ok']}/{s['n']} mean e2e {fmt(s['mean_e2e_s'])} p90 {fmt(s['p90_e2e_s'])}"
            f" ttft p90 {fmt(s['p90_ttft_s'])} tok/step {s['tokens_per_step']} errors {s['errors']}")
        record.add(run)
    (args.out / f"vllm-{name}-metrics.txt").write_text(http_get(url + "/metrics")[1])
    record.close()
    record.finish(elapsed=False)
    return 0


def run_direct(args: argparse.Namespace, backends: dict[str, str], low: list[WorkloadItem], record: Record,
               deadline: float) -> None:
    """The start of the low phase sent to each backend without the gateway: reference latencies."""
    for name, url in backends.items():
        if time.monotonic() > deadline:
            break
        items = with_nonce([i for i in low if i.t <= args.direct_duration], f"direct-{name}")
        rows, wall, delta = measure("low", items, url, url, args, deadline)
        record.rows(rows, "direct", f"low-{name}")
        run: dict[str, Any] = {"policy": "direct", "direct_target": name, "phase": "low",
                               "summary": summarize(rows, wall), "vllm_spec_delta": delta}
        log(f"direct {name} low: mean e2e {fmt(run['summary']['mean_e2e_s'])} ok {run['summary']['ok']}")
        record.add(run)


def gateway_phase(args: argparse.Namespace, policy: str, gw: Gateway, phase: str, items: list[WorkloadItem],
                  record: Record, deadline: float) -> None:
    """One phase through the gateway, with what the gateway learned and measured of itself by its end."""
    nonce = f"{policy.replace('@', 's')}-{phase}"
    rows, wall, delta = measure(phase, with_nonce(items, nonce), gw.url, args.speculative_url, args, deadline)
    state_status, state_text = http_get(gw.url + "/admin/state")
    state = json.loads(state_text) if state_status == 200 else {}
    metrics_status, metrics_text = http_get(gw.url + "/metrics")
    if metrics_status != 200:  # the gateway is gone: record it, keep the phase's rows
        log(f"gateway {policy} /metrics: {metrics_status} {metrics_text[:200]}")
        metrics_text = ""
    learned, classes = extract_learned(state)
    record.rows(rows, policy, phase)
    run = {"policy": policy, "phase": phase, "summary": summarize(rows, wall),
           "learned_tokens_per_step": learned, "learned_classes": classes,
           "learned_timing": {k: (state.get("learner") or {}).get(k)
                              for k in ("step_models", "prefill_s_per_token", "interference")},
           "regimes": state.get("regimes"),
           "overhead": histogram(metrics_text, "specgate_gateway_overhead_seconds"),
           "migrations": counters_by(metrics_text, "specgate_migrations_total", "reason"),
           "regime_switches": counters_by(metrics_text, "specgate_regime_switches_total", "group"),
           "vllm_spec_delta": delta}
    add_acceptance_length(run)
    if phase == "high":
        run["admin_state"] = state
    s = run["summary"]
    log(f"{policy} {phase}: ok {s['ok']}/{s['n']} mean e2e {fmt(s['mean_e2e_s'])} p90 "
        f"{fmt(s['p90_e2e_s'])} ttft {fmt(s['mean_ttft_s'])} split {s['split']} learned {fmt(learned)}"
        f" errors {s['errors']} {s['error_sample'][:1]}")
    record.add(run)


def run_policy(args: argparse.Namespace, policy: str, phases: Phases, record: Record, deadline: float) -> str | None:
    """A fresh gateway with `policy`, the low then the high phase through it; the head and tail of its log."""
    if time.monotonic() > deadline:
        log(f"budget spent: skipping {policy}")
        record.results.setdefault("skipped", []).append(policy)
        return None
    gw_log = Path(f"/tmp/specgate-gw-{args.label}-{policy.replace('@', '-seed')}.log")
    gw = Gateway(args, policy, gw_log)
    if not gw.ready(30):
        rc = gw.stop()
        tail = gw_log.read_text(errors="replace")[-3000:]
        log(f"gateway {policy} not ready (rc {rc}):\n{tail}")
        record.results.setdefault("failed", {})[policy] = tail
        record.save()
        return None
    try:
        for phase, items in (("low", phases.low), ("high", phases.high)):
            if time.monotonic() > deadline:
                break
            if not items:
                continue
            gateway_phase(args, policy, gw, phase, items, record, deadline)
    finally:
        rc = gw.stop()
        text = gw_log.read_text(errors="replace")
    return f"==== gateway {policy} (rc {rc}) first/last lines ====\n" + "\n".join(
        [*text.splitlines()[:5], "...", *text.splitlines()[-8:]])


def run_pair(args: argparse.Namespace, phases: Phases, record: Record, deadline: float) -> int:
    """The pair: warm-up, optionally the direct reference, then each policy through a fresh gateway."""
    backends = {"baseline": args.baseline_url, "speculative": args.speculative_url}
    for name, url in backends.items():
        if not healthy(url, f"{name} not healthy", record):
            log(f"{name} {url} not healthy")
            return 1
    log(f"both backends healthy; low n={len(phases.low)} (dropped {phases.low_dropped}), high n={len(phases.high)}"
        f" (dropped {phases.high_dropped})")
    warm = with_nonce(phases.warm, "warm")
    for name, url in backends.items():
        if warm:
            rows = warm_up(name, url, warm, args, record, deadline)
            log(f"warm-up {name}: {[r.status for r in rows]} e2e {[round(r.e2e_s or 0, 2) for r in rows]}")
    if args.direct:
        run_direct(args, backends, phases.low, record, deadline)
    logs = [block for policy in args.policies.split(",")
            if (block := run_policy(args, policy, phases, record, deadline)) is not None]
    record.close()
    for name, url in backends.items():
        (args.out / f"vllm-{name}-metrics.txt").write_text(http_get(url + "/metrics")[1])
    (args.out / "logs.txt").write_text("\n".join(logs) + "\n")
    record.finish(elapsed=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget_s
    phases, meta = prepare(args)
    record = Record(args.out, meta)
    if args.single:
        return run_single(args, phases, record, deadline)
    return run_pair(args, phases, record, deadline)


if __name__ == "__main__":
    sys.exit(main())
