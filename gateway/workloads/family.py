"""A family of unseen bursty/phased traces, drawn from a seed, not hand-picked.

`specgate workload generate --family bursty --seed N --out f.jsonl` writes member N. Each member is a few
phases of Poisson arrivals, each phase with its own length (10-60 s), rate (0.5-15 requests/s, log-uniform)
and class mix (a point between the creative-heavy and the structured-heavy mixes, with every task kind
weighted in every phase). The phases of one member differ in rate by at least `MIN_CONTRAST`x (a trace whose
phases all run at one rate is not phased). Drawn lengths are scaled down together (none below 10 s) to an
expected `MAX_REQUESTS` requests and `MAX_SPAN_S` seconds, so that a run of three policies at time scale 1
stays a few minutes and every phase is in the trace; a member stops at `MAX_REQUESTS` requests.
`specgate evaluate --robust --family K` runs members `--family-seed` .. + K - 1 beside the built-ins.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass

from gateway.workloads.corpus import Corpus
from gateway.workloads.generate import MIXES, draw_task
from gateway.workloads.items import WorkloadItem
from gateway.workloads.task import KINDS

FAMILIES = ("bursty",)
PHASES = (3, 4)  # phases per member, inclusive
LENGTH_S = (10.0, 60.0)
RATE = (0.5, 15.0)
MIN_CONTRAST = 4.0  # the fastest phase's rate over the slowest's, at least
MAX_REQUESTS = 450
MAX_SPAN_S = 90.0  # a member's phases are shortened (none below 10 s) to about this span and request count
KIND_FLOOR = 1.5  # every task kind's weight in every phase (the named mixes leave some kinds out)


@dataclass(frozen=True, slots=True)
class Phase:
    length_s: float
    rate: float
    structured: float  # 0: the creative-heavy mix, 1: the structured-heavy mix


def phase_weights(structured: float) -> dict[str, float]:
    """The class mix of a phase: a blend of the creative and structured mixes, every kind at least `KIND_FLOOR`."""
    creative, struct = MIXES["creative"], MIXES["structured"]
    return {k: KIND_FLOOR + (1.0 - structured) * creative.get(k, 0.0) + structured * struct.get(k, 0.0)
            for k in KINDS}


def draw_phases(seed: int) -> list[Phase]:
    """Member `seed`'s phases (re-drawn until the rates differ by `MIN_CONTRAST`x)."""
    rng = random.Random(f"family-bursty-{seed}")
    lo, hi = math.log(RATE[0]), math.log(RATE[1])
    centre = rng.random()  # the member's class mix; each phase wanders around it
    while True:
        plan = [Phase(round(rng.uniform(*LENGTH_S), 1), round(math.exp(rng.uniform(lo, hi)), 2),
                      round(min(1.0, max(0.0, centre + rng.uniform(-0.3, 0.3))), 2))
                for _ in range(rng.randint(*PHASES))]
        rates = [p.rate for p in plan]
        if max(rates) >= MIN_CONTRAST * min(rates):
            return _fit(plan)


def _fit(plan: list[Phase]) -> list[Phase]:
    expected, span = sum(p.length_s * p.rate for p in plan), sum(p.length_s for p in plan)
    factor = min(1.0, MAX_REQUESTS / expected, MAX_SPAN_S / span)
    return [Phase(round(max(LENGTH_S[0], p.length_s * factor), 1), p.rate, p.structured) for p in plan]


def _kind(weights: Mapping[str, float], rng: random.Random) -> str:
    kinds = sorted(weights)
    return rng.choices(kinds, weights=[weights[k] for k in kinds])[0]


def member(seed: int, corpus: Corpus | None = None) -> list[WorkloadItem]:
    """Family member `seed`: its phases' arrivals, each request's kind from its phase's mix."""
    corpus = corpus or Corpus()
    rng = random.Random(seed)
    items: list[WorkloadItem] = []
    start = 0.0
    for phase in draw_phases(seed):
        weights, t = phase_weights(phase.structured), start
        while len(items) < MAX_REQUESTS:
            t += rng.expovariate(phase.rate)
            if t >= start + phase.length_s:
                break
            task = draw_task(_kind(weights, rng), corpus, rng)
            while task is None:  # this installation lacks the source text for that kind
                task = draw_task(_kind(weights, rng), corpus, rng)
            items.append(WorkloadItem(id=f"bursty{seed}-{len(items):05d}", t=round(t, 6), endpoint=task.endpoint,
                                      body=task.body, reference=task.reference, kind=task.kind))
        start += phase.length_s
    return items


def describe(seed: int) -> str:
    """One line: the member's phases as 'length s @ rate/s (structured share)'."""
    return ", ".join(f"{p.length_s:g} s @ {p.rate:g}/s (s{p.structured:.2f})" for p in draw_phases(seed))
