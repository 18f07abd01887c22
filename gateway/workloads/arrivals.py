"""Arrival processes: send times in seconds from the start of a run, deterministic for a given RNG.

- `poisson(rate, n)`: exponential gaps at `rate` requests per second;
- `phases([(duration_s, rate), ...], n)`: Poisson at each phase's rate for its duration, cycling through the
  phases until `n` arrivals (a rate of 0 is an idle phase);
- `bursts(rate, n, every_s, size, width_s)`: Poisson background plus `size` extra requests spread uniformly over
  `width_s` seconds every `every_s` seconds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence


def poisson(rate: float, n: int, rng: random.Random, start: float = 0.0) -> list[float]:
    if rate <= 0:
        raise ValueError("rate must be > 0")
    times: list[float] = []
    t = start
    for _ in range(n):
        t += rng.expovariate(rate)
        times.append(t)
    return times


def phases(plan: Sequence[tuple[float, float]], n: int, rng: random.Random) -> list[float]:
    if not plan or all(rate <= 0 for _, rate in plan) or any(d <= 0 for d, _ in plan):
        raise ValueError("phases need positive durations and at least one positive rate")
    times: list[float] = []
    start = 0.0
    while len(times) < n:
        for duration, rate in plan:
            end = start + duration
            t = start
            while rate > 0 and len(times) < n:
                t += rng.expovariate(rate)
                if t >= end:
                    break
                times.append(t)
            start = end
            if len(times) >= n:
                break
    return times


def bursts(rate: float, n: int, rng: random.Random, every_s: float, size: int, width_s: float = 0.5) -> list[float]:
    if every_s <= 0 or size < 0 or width_s < 0:
        raise ValueError("bursts need every_s > 0, size >= 0, width_s >= 0")
    base_n = max(1, round(n * rate * every_s / (rate * every_s + size))) if rate > 0 else 0
    times = poisson(rate, base_n, rng) if base_n else []
    k = 1
    while base_n + (k - 1) * size < n:
        at = k * every_s
        times.extend(at + rng.uniform(0, width_s) for _ in range(size))
        k += 1
    return sorted(times)[:n]


def parse_phases(spec: str) -> list[tuple[float, float]]:
    """`"30:1,20:8,30:1"` -> [(30.0, 1.0), (20.0, 8.0), (30.0, 1.0)] (duration seconds : rate per second)."""
    plan = []
    for part in spec.split(","):
        duration, _, rate = part.strip().partition(":")
        if not rate:
            raise ValueError(f"phase {part!r} is not DURATION:RATE")
        plan.append((float(duration), float(rate)))
    return plan
