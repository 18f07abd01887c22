"""Build a workload: draw tasks from a mix of kinds, assign send times from an arrival process."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from gateway.workloads import arrivals, code, prose, structured
from gateway.workloads.corpus import Corpus
from gateway.workloads.items import WorkloadItem
from gateway.workloads.sql import sql_task
from gateway.workloads.task import KINDS, Task

Generator = Callable[[Corpus, random.Random], Task | None]
GENERATORS: dict[str, Generator] = {
    "json_object": structured.email_json,
    "json_schema": structured.function_schema,
    "extraction_json": structured.news_json,
    "sql": lambda _corpus, rng: sql_task(rng),
    "code_edit": code.code_edit,
    "code_gen": code.code_gen,
    "chat": prose.chat,
    "extraction": prose.extraction,
    "creative": prose.creative,
    "long_context": prose.long_context,
}
# Relative weights per named mix.
MIXES: dict[str, dict[str, float]] = {
    "mixed": {"json_object": 6, "json_schema": 6, "extraction_json": 5, "sql": 9, "code_edit": 12, "code_gen": 10,
              "chat": 18, "extraction": 6, "creative": 18, "long_context": 10},
    "structured": {"json_object": 18, "json_schema": 18, "extraction_json": 14, "sql": 20, "code_edit": 10,
                   "code_gen": 5, "chat": 5, "extraction": 5, "creative": 2, "long_context": 3},
    "creative": {"creative": 60, "chat": 25, "code_gen": 5, "json_object": 3, "sql": 3, "long_context": 4},
}


@dataclass(frozen=True, slots=True)
class Arrival:
    """`poisson` at `rate`, `phases` from `plan`, or `bursts` (Poisson at `rate` plus bursts)."""

    process: str = "poisson"
    rate: float = 1.0
    plan: tuple[tuple[float, float], ...] = ()
    burst_every_s: float = 10.0
    burst_size: int = 10
    burst_width_s: float = 0.5

    def times(self, n: int, rng: random.Random) -> list[float]:
        if self.process == "poisson":
            return arrivals.poisson(self.rate, n, rng)
        if self.process == "phases":
            return arrivals.phases(self.plan, n, rng)
        if self.process == "bursts":
            return arrivals.bursts(self.rate, n, rng, self.burst_every_s, self.burst_size, self.burst_width_s)
        raise ValueError(f"unknown arrival process {self.process!r}")


def parse_weights(spec: str) -> dict[str, float]:
    """A mix name or explicit weights `"chat=2,sql=1"`."""
    if spec in MIXES:
        return dict(MIXES[spec])
    weights = {}
    for part in spec.split(","):
        kind, _, weight = part.partition("=")
        kind = kind.strip()
        if kind not in GENERATORS:
            raise ValueError(f"unknown mix or kind {kind!r}; mixes: {sorted(MIXES)}, kinds: {list(KINDS)}")
        weights[kind] = float(weight or 1)
    return weights


def draw_task(kind: str, corpus: Corpus, rng: random.Random, attempts: int = 50) -> Task | None:
    for _ in range(attempts):
        task = GENERATORS[kind](corpus, rng)
        if task is not None:
            return task
    return None


def generate(
    n: int,
    mix: Mapping[str, float] | str = "mixed",
    arrival: Arrival | None = None,
    seed: int = 0,
    corpus: Corpus | None = None,
    id_prefix: str = "req",
) -> list[WorkloadItem]:
    """`n` requests, deterministic for a seed on a given Python installation."""
    weights = parse_weights(mix) if isinstance(mix, str) else dict(mix)
    corpus = corpus or Corpus()
    rng = random.Random(seed)
    kinds: Sequence[str] = sorted(k for k, w in weights.items() if w > 0)
    times = (arrival or Arrival()).times(n, random.Random(rng.random()))
    items = []
    for i, t in enumerate(times):
        task = None
        while task is None:
            kind = rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
            task = draw_task(kind, corpus, rng)
            if task is None:  # this installation lacks the source text for that kind
                kinds = [k for k in kinds if k != kind]
                if not kinds:
                    raise RuntimeError("no task kind in the mix can be generated on this installation")
        items.append(WorkloadItem(id=f"{id_prefix}-{i:05d}", t=round(t, 6), endpoint=task.endpoint, body=task.body,
                                  reference=task.reference, kind=task.kind))
    return items
