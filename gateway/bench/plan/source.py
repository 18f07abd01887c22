"""`specgate plan --from URL`: the workload of a running deployment, read from its gateway.

From `/metrics` (prometheus_client's text parser): per class and temperature bucket, how many requests
succeeded and their mean prompt and completion tokens (`specgate_prompt_tokens`, `specgate_completion_tokens`),
and the arrival rate (requests over the time since `specgate_start_time_seconds`, the earliest replica's).
From `/admin/state`: each class's measured tokens per speculative step. The replayed workload draws requests
of the same class and temperature bucket from the built-in workloads, in the measured mix, at the measured
rate (Poisson arrivals, seeded), drawn with weights tilted (exponentially, in output length) so that each
cell's mean output length is the measured one; each drawn request carries its cell's measured tokens per
step, which the emulator applies as synthetic acceptance (cells never measured on a speculative server keep
the drafter's real guesses). The analytic pass uses the measured lengths and acceptance.
"""

from __future__ import annotations

import json
import math
import random
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, replace

from prometheus_client.parser import text_string_to_metric_families

from gateway.bench.plan.analytic import Shape
from gateway.core.classify import classify, features, temperature_bucket
from gateway.core.protocol import request_view
from gateway.emulator.text import tokenize
from gateway.settings import Settings
from gateway.workloads.items import WorkloadItem, load_workload

CORPUS = ("demo-mixed", "mixed-low", "mixed-medium", "mixed-high", "structured-heavy", "creative-heavy")


@dataclass(frozen=True, slots=True)
class Cell:
    """What the deployment served of one class and temperature bucket."""
    task_class: str
    bucket: str
    requests: int
    prompt_tokens: float
    output_tokens: float
    tokens_per_step: float | None  # measured on a speculative server; None if never


@dataclass(frozen=True, slots=True)
class Traffic:
    cells: tuple[Cell, ...]
    rate_per_s: float  # arrivals per simulated second of the deployment

    @property
    def requests(self) -> int:
        return sum(c.requests for c in self.cells)


def _get(url: str, timeout_s: float = 10.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        body: bytes = response.read()
    return body.decode()


def parse_metrics(text: str, now: float, time_scale: float = 1.0) -> tuple[dict[tuple[str, str], list[float]], float]:
    """{(class, bucket): [requests, prompt tokens sum, completion tokens sum]} and the arrival rate per
    simulated second (`time_scale` wall seconds per simulated second of the deployment)."""
    cells: dict[tuple[str, str], list[float]] = {}
    start = now
    column = {"specgate_prompt_tokens_count": 0, "specgate_prompt_tokens_sum": 1, "specgate_completion_tokens_sum": 2}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "specgate_start_time_seconds" and sample.value > 0:
                start = min(start, sample.value)
            elif sample.name in column:
                key = (sample.labels["class"], sample.labels["temperature"])
                cells.setdefault(key, [0.0, 0.0, 0.0])[column[sample.name]] += sample.value
    total = sum(v[0] for v in cells.values())
    elapsed = max(now - start, 1e-9) / time_scale
    return cells, total / elapsed


def parse_acceptance(state: dict[str, object]) -> dict[tuple[str, str], float]:
    """Tokens per speculative step of each class/bucket the learner measured on a speculative server."""
    learner = state.get("learner")
    classes = learner.get("classes", {}) if isinstance(learner, dict) else {}
    out: dict[tuple[str, str], float] = {}
    for key, est in classes.items():
        if isinstance(est, dict) and est.get("speculative_observations"):
            task_class, _, bucket = str(key).partition("/")
            out[(task_class, bucket)] = float(est["tokens_per_step"])
    return out


def read_traffic(url: str, time_scale: float = 1.0) -> Traffic:
    base = url.rstrip("/")
    counts, rate = parse_metrics(_get(base + "/metrics"), time.time(), time_scale)
    acceptance = parse_acceptance(json.loads(_get(base + "/admin/state")))
    cells = tuple(Cell(c, b, int(n), p / n, o / n, acceptance.get((c, b)))
                  for (c, b), (n, p, o) in sorted(counts.items()) if n >= 1)
    return Traffic(cells, rate)


def corpus_by_cell() -> dict[tuple[str, str], list[WorkloadItem]]:
    """The built-in workloads' requests by (class, temperature bucket), as the gateway classifies them."""
    config = Settings().classifier_config()
    pool: dict[tuple[str, str], list[WorkloadItem]] = {}
    for name in CORPUS:
        for item in load_workload(name):
            f = features(request_view(item.endpoint, item.body), config)
            pool.setdefault((classify(f, config), temperature_bucket(f.temperature)), []).append(item)
    return pool


def output_tokens(item: WorkloadItem) -> int:
    """What the emulator generates for `item`: its reference's tokens and EOS, capped by `max_tokens`."""
    cap = item.body.get("max_tokens") or item.body.get("max_completion_tokens")
    n = len(tokenize(item.reference or "")) + 1
    return min(n, cap) if isinstance(cap, int) and cap > 0 else n


def tilted_weights(lengths: Sequence[float], target: float) -> list[float]:
    """Weights exp(θ·x) over `lengths` whose weighted mean is `target` (clamped to the lengths' range): the
    closest distribution to drawing uniformly (in relative entropy) with that mean."""
    lo, hi = min(lengths), max(lengths)
    if hi - lo < 1e-9:
        return [1.0] * len(lengths)
    if target <= lo or target >= hi:  # the measured mean is outside what the corpus has: its nearest end
        edge = lo if target <= lo else hi
        return [1.0 if x == edge else 0.0 for x in lengths]
    scale = hi - lo
    xs = [(x - lo) / scale for x in lengths]

    def weights(theta: float) -> list[float]:
        top = max(theta * x for x in xs)
        return [math.exp(theta * x - top) for x in xs]

    def mean(theta: float) -> float:
        w = weights(theta)
        return sum(wi * x for wi, x in zip(w, lengths, strict=True)) / sum(w)

    a, b = -1e4, 1e4
    for _ in range(100):
        mid = (a + b) / 2
        a, b = (mid, b) if mean(mid) < target else (a, mid)
    return weights((a + b) / 2)


def synthesize(traffic: Traffic, limit: int, seed: int = 0) -> tuple[list[WorkloadItem], list[Cell], list[str]]:
    """`limit` requests in the measured mix at the measured rate; the cell of each; cells the corpus lacks."""
    pool = corpus_by_cell()
    tilt = {(c.task_class, c.bucket): tilted_weights([output_tokens(i) for i in pool[(c.task_class, c.bucket)]],
                                                     c.output_tokens)
            for c in traffic.cells if (c.task_class, c.bucket) in pool}
    rng = random.Random(seed)
    usable = [c for c in traffic.cells if (c.task_class, c.bucket) in pool]
    missing = [f"{c.task_class}/{c.bucket}" for c in traffic.cells if c not in usable]
    total = sum(c.requests for c in usable)
    picks: list[Cell] = []
    for c in usable:
        picks += [c] * max(1, round(limit * c.requests / total))
    rng.shuffle(picks)
    items, t = [], 0.0
    for i, cell in enumerate(picks[:limit]):
        key = (cell.task_class, cell.bucket)
        source = rng.choices(pool[key], weights=tilt[key])[0]
        items.append(replace(source, id=f"from-{i}-{source.id}", t=t, tokens_per_step=cell.tokens_per_step))
        t += rng.expovariate(traffic.rate_per_s)
    return items, picks[:limit], missing


def measured_shapes(items: Sequence[WorkloadItem], cells: Sequence[Cell], drafter: dict[str, Shape]) -> list[Shape]:
    """Each request's measured class lengths and acceptance; a class never measured on a speculative server
    keeps the drafter's estimate over the drawn request (`drafter`, by id; 1 token a step without one)."""
    out = []
    for item, c in zip(items, cells, strict=True):
        fallback = drafter[item.id].tokens_per_step if item.id in drafter else 1.0
        out.append(Shape(round(c.prompt_tokens), c.output_tokens,
                         c.tokens_per_step if c.tokens_per_step is not None else fallback))
    return out
