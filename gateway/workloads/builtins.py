"""How the built-in workloads in `gateway/workloads/builtin/` are made (rebuild: `specgate workload build-builtin`).

Rates are in simulated requests per second against the default emulated profile: 1 request/s keeps about
one request in flight (low load), 6/s a handful (medium), 30/s a few dozen (high load, where verifying γ+1
tokens per sequence makes the batch compute-bound).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gateway.workloads.generate import Arrival, generate
from gateway.workloads.items import write_workload
from gateway.workloads.multiturn import multi_turn


@dataclass(frozen=True, slots=True)
class BuiltinSpec:
    name: str
    mix: str
    n: int
    arrival: Arrival
    seed: int
    about: str


BUILTINS = (
    BuiltinSpec("demo-mixed", "mixed", 150, Arrival(rate=3.0), 7,
                "the demo's mixed traffic: every task kind, low-to-moderate Poisson load"),
    BuiltinSpec("mixed-low", "mixed", 300, Arrival(rate=1.0), 11, "mixed traffic, Poisson at 1 request/s"),
    BuiltinSpec("mixed-medium", "mixed", 300, Arrival(rate=6.0), 16, "mixed traffic, Poisson at 6 requests/s"),
    BuiltinSpec("mixed-high", "mixed", 300, Arrival(rate=30.0), 12, "mixed traffic, Poisson at 30 requests/s"),
    BuiltinSpec("mixed-phases", "mixed", 300, Arrival("phases", plan=((60.0, 1.0), (30.0, 10.0), (60.0, 1.0))), 13,
                "mixed traffic: quiet, a busy phase, quiet again"),
    BuiltinSpec("structured-heavy", "structured", 300, Arrival(rate=3.0), 14, "mostly JSON, SQL and code edits"),
    BuiltinSpec("bursty", "mixed", 410, Arrival("bursts", rate=3.0, burst_every_s=8.0, burst_size=20,
                                                 burst_width_s=0.5), 17,
                "mixed traffic, Poisson at 3 requests/s plus a burst of 20 within 0.5 s every 8 s (5.5/s mean)"),
    BuiltinSpec("creative-heavy", "creative", 300, Arrival(rate=3.0), 15,
                "mostly creative writing at temperature 0.9-1.2, and chat"),
)


def build_builtins(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in BUILTINS:
        path = folder / f"{spec.name}.jsonl"
        write_workload(generate(spec.n, spec.mix, spec.arrival, seed=spec.seed, id_prefix=spec.name), path)
        written.append(path)
    # conversations whose turns repeat their history: what prefix caches are for (`multiturn`)
    path = folder / "multi-turn-chat.jsonl"
    write_workload(multi_turn(80, 1.2, seed=21, id_prefix="multi-turn-chat"), path)
    return [*written, path]
