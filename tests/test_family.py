"""The generated family of unseen bursty/phased traces: drawn from seeds within the stated ranges, deterministic,
and runnable by `specgate workload generate --family` and `specgate evaluate --robust --family`."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.workloads.family import (
    LENGTH_S,
    MAX_REQUESTS,
    MAX_SPAN_S,
    MIN_CONTRAST,
    RATE,
    draw_phases,
    member,
    phase_weights,
)
from gateway.workloads.items import load_workload
from gateway.workloads.task import KINDS


def test_twenty_members_are_phased_within_the_ranges_and_all_differ() -> None:
    plans = [draw_phases(seed) for seed in range(1, 21)]
    assert len({tuple(p) for p in plans}) == 20
    for plan in plans:
        assert 3 <= len(plan) <= 4
        rates = [p.rate for p in plan]
        assert all(RATE[0] <= r <= RATE[1] for r in rates)
        assert max(rates) >= MIN_CONTRAST * min(rates)  # phased: not one rate throughout
        assert all(LENGTH_S[0] <= p.length_s <= LENGTH_S[1] for p in plan)
        assert all(0.0 <= p.structured <= 1.0 for p in plan)
    mixes = [p.structured for plan in plans for p in plan]
    assert min(mixes) < 0.2 and max(mixes) > 0.8  # from creative-heavy to structured-heavy


def test_every_task_kind_is_drawn_in_every_phase_and_the_mix_moves() -> None:
    creative, structured = phase_weights(0.0), phase_weights(1.0)
    assert set(creative) == set(structured) == set(KINDS)
    assert all(w > 0 for w in [*creative.values(), *structured.values()])
    assert creative["creative"] > 5 * structured["creative"]
    assert structured["json_schema"] > 5 * creative["json_schema"]


def test_a_member_is_deterministic_bounded_and_follows_its_phases() -> None:
    seed = 3
    items = member(seed)
    assert [i.to_json() for i in items] == [i.to_json() for i in member(seed)]
    assert 0 < len(items) <= MAX_REQUESTS
    plan = draw_phases(seed)
    assert sum(p.length_s for p in plan) <= MAX_SPAN_S + 10.0 * len(plan)
    start = 0.0
    for p in plan:  # each phase's arrivals come at about its rate
        n = sum(1 for i in items if start <= i.t < start + p.length_s)
        expected = p.rate * p.length_s
        assert abs(n - expected) <= 4 * expected ** 0.5 + 2, (p, n)
        start += p.length_s
    assert len({i.kind for i in items}) == len(KINDS)


def test_the_cli_writes_a_member_and_evaluate_runs_the_family_beside_the_builtins(tmp_path: Path) -> None:
    from gateway.bench.evaluate import family_workloads
    from gateway.workloads.cli import main as workload

    out = tmp_path / "m.jsonl"
    assert workload(["generate", "--family", "bursty", "--seed", "7", "--out", str(out)]) == 0
    assert [i.to_json() for i in load_workload(out)] == [i.to_json() for i in member(7)]
    files = family_workloads(tmp_path, 2, 7)
    assert list(files) == ["bursty-7", "bursty-8"]
    assert json.loads(Path(files["bursty-7"]).read_text().splitlines()[0]) == member(7)[0].to_json()
