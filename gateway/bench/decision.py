"""`specgate bench-decision`: how long one routing decision takes (classify + learner lookups + policy).

Measures the pure path the proxy runs per request (request view → features → class → estimates →
decision) with a warmed learner, for each policy, and the decision alone (learner estimates + policy on
an already classified request); writes medians and p99s.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client import CollectorRegistry

from gateway.backends import BackendPool
from gateway.core.classify import classify, features
from gateway.core.costmodel import Role
from gateway.core.learner import Learner, Observation
from gateway.core.policy import PolicyInput, PolicyName, decide
from gateway.core.protocol import CHAT, COMPLETIONS, request_view
from gateway.metrics import Metrics
from gateway.router import Router
from gateway.settings import Settings

BODIES = [
    (CHAT, {"model": "m", "messages": [{"role": "system", "content": "You are helpful."},
                                       {"role": "user", "content": "Return JSON with keys name, age. " * 20}],
            "response_format": {"type": "json_object"}, "temperature": 0, "max_tokens": 200}),
    (CHAT, {"model": "m", "messages": [{"role": "user", "content": "Write a poem about the sea. " * 10}],
            "temperature": 1.0, "stream": True}),
    (COMPLETIONS, {"model": "m", "prompt": "def fib(n):\n    " * 50, "max_tokens": 128}),
    (CHAT, {"model": "m", "messages": [{"role": "user", "content": "x " * 20000}], "max_tokens": 64}),
]


def fleet(backends: int, layout: str) -> list[str]:
    """`backends` servers, half of each role: `pairs` share a GPU two by two, `own` have a GPU each."""
    entries = []
    for i in range(backends):
        role = "speculative" if i % 2 else "baseline"
        group = f"@pair{i // 2}" if layout == "pairs" else ""
        entries.append(f"{role}=http://127.0.0.1:{9000 + i}{group}")
    return entries


def measure(policy: PolicyName, n: int, backends: int = 2, layout: str = "pairs",
            idle: bool = False) -> dict[str, float]:
    settings = Settings(policy=policy, random_seed=1, backends=fleet(backends, layout))
    metrics = Metrics(CollectorRegistry())
    learner = Learner(settings.learner_config())
    for i in range(200):  # a warmed learner, as in steady state
        role: Role = "speculative" if i % 2 else "baseline"
        other: Role = "baseline" if i % 2 else "speculative"
        learner.observe(Observation(role, "structured", "greedy", 300, 200, 80 if i % 2 else 200, 0.03,
                                    1.0 + 0.001 * (i % 7), 1 + i % 5, ((other, float(i % 3)),)))
    pool = BackendPool(settings, metrics)
    for i, b in enumerate(pool.backends):
        b.inflight = 0 if idle else i % 5
    router = Router(settings, pool, learner)
    bodies = [(endpoint, body) for endpoint, body in BODIES]
    samples = []
    for i in range(n):
        endpoint, body = bodies[i % len(bodies)]
        t0 = time.perf_counter_ns()
        routed = router.route(request_view(endpoint, body), f"r{i}")
        samples.append(time.perf_counter_ns() - t0)
        assert routed is not None
    policy_only = []
    views = [request_view(endpoint, body) for endpoint, body in bodies]
    classified = [(f, classify(f, router.classifier)) for f in (features(v, router.classifier) for v in views)]
    candidates = router.view.candidates(time.monotonic(), frozenset())
    for i in range(n):
        f, task_class = classified[i % len(classified)]
        t0 = time.perf_counter_ns()
        est = router.estimates(f, task_class, "greedy", f"r{i}") if policy in ("adaptive", "clairvoyant") else None
        inp = PolicyInput(f, task_class, "greedy", candidates, est, draw=(i % 100) / 100)
        decide(policy, inp, router.rules, router.adaptive)
        policy_only.append(time.perf_counter_ns() - t0)
    return {**_stats("total", samples), **_stats("decision", policy_only)}


def _stats(name: str, samples: list[int]) -> dict[str, float]:
    samples.sort()
    return {f"{name}_median_us": statistics.median(samples) / 1000,
            f"{name}_p99_us": samples[int(0.99 * len(samples))] / 1000}


def _excess(args: argparse.Namespace) -> int:
    """The adaptive route's median over `--backends` less its median over `--against`, measured alternately so
    that a machine's drift falls on both (one-off runs of this 2-core machine moved by ±30%)."""
    totals: dict[int, list[float]] = {args.against: [], args.backends: []}
    for _ in range(args.rounds):
        for size in totals:
            totals[size].append(measure("adaptive", args.n, size, args.layout, args.idle)["total_median_us"])
    medians = {size: statistics.median(values) for size, values in totals.items()}
    print(f"adaptive route, {args.layout}{', idle' if args.idle else ''}: "
          + ", ".join(f"{size} backends {m:.1f} µs" for size, m in medians.items())
          + f"; excess {medians[args.backends] - medians[args.against]:.1f} µs (medians of {args.rounds} rounds)")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="specgate bench-decision", description=__doc__)
    parser.add_argument("-n", type=int, default=20000)
    parser.add_argument("--backends", type=int, default=2, help="fleet size (half baseline, half speculative)")
    parser.add_argument("--layout", choices=("pairs", "own"), default="pairs",
                        help="pairs: two servers per GPU; own: a GPU per server")
    parser.add_argument("--idle", action="store_true",
                        help="every backend idle (as at c = 1); default: 0-4 requests running on each")
    parser.add_argument("--against", type=int, default=0, metavar="BACKENDS",
                        help="instead: the adaptive route's excess over a fleet of this size (usually 2), both "
                             "measured in turn --rounds times, medians")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=Path("results/decision.json"))
    args = parser.parse_args(argv)
    if args.against:
        return _excess(args)
    policies: tuple[PolicyName, ...] = ("baseline", "rules", "least_loaded", "adaptive", "clairvoyant")
    results = {p: measure(p, args.n, args.backends, args.layout, args.idle) for p in policies}
    doc = {"date": datetime.now(UTC).isoformat(timespec="seconds"),
           "machine": f"{platform.machine()} {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}",
           "python": sys.version.split()[0], "decisions_per_policy": args.n, "backends": args.backends,
           "layout": args.layout, "idle": args.idle,
           "what": "request_view + features + classify + learner estimates + policy, per request", "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2) + "\n")
    print(f"{args.backends} backends ({args.layout}); per request: total = parse view + classify + estimates + policy;"
          " decision = estimates + policy")
    for policy, r in results.items():
        print(f"{policy:12} total median {r['total_median_us']:6.1f} µs p99 {r['total_p99_us']:6.1f} µs   "
              f"decision median {r['decision_median_us']:5.1f} µs p99 {r['decision_p99_us']:6.1f} µs")
    print(f"written {args.out}")
    return 0
