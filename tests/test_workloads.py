"""Workload generators: determinism, validity of every kind, arrival processes, built-ins and the CLI."""

from __future__ import annotations

import ast
import json
import random
import re
import sqlite3
import statistics
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from gateway.workloads import arrivals
from gateway.workloads.cli import main as workload_main
from gateway.workloads.corpus import Corpus
from gateway.workloads.generate import GENERATORS, MIXES, Arrival, draw_task, generate
from gateway.workloads.items import ENDPOINTS, WorkloadError, WorkloadItem, builtin_names, load_workload, parse_jsonl
from gateway.workloads.sql import schema
from gateway.workloads.task import KIND_CLASS, KINDS


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus()


@pytest.fixture(scope="module")
def mixed(corpus: Corpus) -> list[WorkloadItem]:
    return generate(200, "mixed", Arrival(rate=4.0), seed=3, corpus=corpus)


def _code_block(text: str) -> str:
    match = re.search(r"```(?:\w+)?\n([\s\S]*?)\n```", text)
    assert match, text
    return match.group(1)


def _prompt(item: WorkloadItem) -> str:
    if "messages" in item.body:
        return "\n".join(m["content"] for m in item.body["messages"])
    return str(item.body["prompt"])


def test_deterministic_for_a_seed(corpus: Corpus) -> None:
    a = generate(40, "mixed", Arrival(rate=2.0), seed=5, corpus=corpus)
    b = generate(40, "mixed", Arrival(rate=2.0), seed=5, corpus=corpus)
    c = generate(40, "mixed", Arrival(rate=2.0), seed=6, corpus=corpus)
    assert [i.to_json() for i in a] == [i.to_json() for i in b]
    assert [i.to_json() for i in a] != [i.to_json() for i in c]


def test_all_kinds_present_and_valid(mixed: list[WorkloadItem]) -> None:
    kinds = Counter(i.kind for i in mixed)
    assert set(kinds) == set(KINDS), kinds
    assert set(KIND_CLASS) == set(GENERATORS)
    assert len({i.id for i in mixed}) == len(mixed)
    times = [i.t for i in mixed]
    assert times == sorted(times) and times[0] >= 0
    for item in mixed:
        assert item.endpoint in ENDPOINTS
        assert item.reference and item.reference.strip()
        body = item.body
        assert body["model"] and body["max_tokens"] >= 16 and 0.0 <= body["temperature"] <= 1.2
        assert ("messages" in body) == (item.endpoint == "/v1/chat/completions")
        assert parse_jsonl(json.dumps(item.to_json()))[0] == item


def test_structured_references_are_valid_json(corpus: Corpus) -> None:
    rng = random.Random(1)
    for kind in ("json_object", "json_schema", "extraction_json"):
        for _ in range(8):
            task = draw_task(kind, corpus, rng)
            assert task is not None
            json.loads(task.reference)
            if kind != "extraction_json":
                assert task.body["response_format"]["type"] == kind


def test_sql_references_run_on_the_schema() -> None:
    from gateway.workloads.sql import sql_task

    db = sqlite3.connect(":memory:")
    for table in schema().values():
        db.execute(table.ddl())
    rng = random.Random(2)
    for _ in range(40):
        task = sql_task(rng)
        sql = _code_block(task.reference)
        db.execute(sql).fetchall()
        for table in re.findall(r"\b(?:FROM|JOIN) (\w+)", sql):
            assert table in _prompt_of(task) or table in ("failed", "ranked")


def _prompt_of(task: Any) -> str:
    return "\n".join(m["content"] for m in task.body["messages"])


def test_code_edits_copy_most_of_the_prompt(corpus: Corpus) -> None:
    rng = random.Random(3)
    for _ in range(25):
        task = draw_task("code_edit", corpus, rng)
        assert task is not None
        original = _code_block(task.body["messages"][-1]["content"])
        edited = _code_block(task.reference)
        ast.parse(edited)
        assert edited != original
        copied = [line for line in edited.splitlines() if line in original.splitlines()]
        assert len(copied) >= 0.6 * len(edited.splitlines())


def test_code_generation_is_real_python(corpus: Corpus) -> None:
    rng = random.Random(4)
    for _ in range(15):
        task = draw_task("code_gen", corpus, rng)
        assert task is not None
        if task.endpoint == "/v1/chat/completions":
            ast.parse(_code_block(task.reference))
        else:
            ast.parse(task.body["prompt"] + task.reference)


def test_creative_is_hot_and_not_copied(corpus: Corpus) -> None:
    rng = random.Random(5)
    for _ in range(15):
        task = draw_task("creative", corpus, rng)
        assert task is not None
        assert 0.9 <= task.body["temperature"] <= 1.2
        assert task.reference not in _prompt_of(task)


def test_long_context_answers_copy_spans(corpus: Corpus) -> None:
    rng = random.Random(6)
    for _ in range(10):
        task = draw_task("long_context", corpus, rng)
        assert task is not None
        prompt = _prompt_of(task)
        assert len(prompt) >= 12000
        assert len(task.reference) < len(prompt) / 8
        lines = [line.strip() for line in task.reference.splitlines() if line.strip()]
        assert all(line in prompt for line in lines)


def test_extraction_answers_come_from_the_text(corpus: Corpus) -> None:
    rng = random.Random(7)
    for _ in range(10):
        task = draw_task("extraction", corpus, rng)
        assert task is not None
        flat = " ".join(_prompt_of(task).split())
        for line in task.reference.splitlines():
            assert line.removeprefix("- ") in flat


def test_poisson_rate() -> None:
    times = arrivals.poisson(5.0, 4000, random.Random(0))
    gaps = [b - a for a, b in zip([0.0, *times], times, strict=False)]
    assert statistics.fmean(gaps) == pytest.approx(0.2, rel=0.06)
    assert times == sorted(times)


def test_phases_follow_their_rates() -> None:
    plan = arrivals.parse_phases("50:2,50:10")
    times = arrivals.phases(plan, 100000, random.Random(1))
    first_cycle = [t for t in times if t < 100]
    low = sum(1 for t in first_cycle if t < 50) / 50
    high = sum(1 for t in first_cycle if t >= 50) / 50
    assert low == pytest.approx(2, rel=0.3) and high == pytest.approx(10, rel=0.2)
    assert len(arrivals.phases(plan, 1500, random.Random(1))) == 1500  # cycles past the plan


def test_bursts_add_clusters() -> None:
    times = arrivals.bursts(1.0, 200, random.Random(2), every_s=10.0, size=20, width_s=0.5)
    assert len(times) == 200 and times == sorted(times)
    in_bursts = sum(1 for t in times if t % 10.0 < 0.5 and t >= 10)
    assert in_bursts >= 125  # 2/3 of the requests come in bursts


def test_bad_arrival_specs() -> None:
    with pytest.raises(ValueError):
        arrivals.parse_phases("30")
    with pytest.raises(ValueError):
        arrivals.poisson(0, 3, random.Random(0))


def test_builtins_load_and_are_realistic() -> None:
    names = builtin_names()
    assert {"demo-mixed", "mixed-low", "mixed-high", "structured-heavy", "creative-heavy"} <= set(names)
    demo = load_workload("demo-mixed")
    assert 100 <= len(demo) <= 250
    assert set(i.kind for i in demo) == set(KINDS)
    for name in names:
        items = load_workload(name)
        assert len({i.id for i in items}) == len(items)
    assert Counter(i.kind for i in load_workload("creative-heavy")).most_common(1)[0][0] == "creative"
    with pytest.raises(WorkloadError):
        load_workload("no-such-workload")


def test_mixes_name_known_kinds() -> None:
    for weights in MIXES.values():
        assert set(weights) <= set(KINDS)


def test_cli_generate(tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    assert workload_main(["generate", "--mix", "sql=1,chat=1", "--n", "12", "--phases", "5:2,5:4", "--seed", "1",
                          "--out", str(out)]) == 0
    items = load_workload(out)
    assert len(items) == 12 and {i.kind for i in items} <= {"sql", "chat"}
    assert workload_main(["stats", str(out)]) == 0
    assert workload_main(["generate", "--mix", "nonsense", "--n", "2", "--out", str(out)]) == 2


def test_synthetic_tokens_per_step_round_trips_and_is_checked() -> None:
    line = {"id": "a", "t": 0.0, "endpoint": "/v1/completions", "body": {"prompt": "x"}, "tokens_per_step": 2.5}
    item = WorkloadItem.from_json(line)
    assert item.tokens_per_step == 2.5 and not item.extra and item.to_json() == line
    assert WorkloadItem.from_json({**line, "tokens_per_step": None}).tokens_per_step is None
    for bad in (0.5, 65, "2", True):
        with pytest.raises(WorkloadError, match="tokens_per_step"):
            WorkloadItem.from_json({**line, "tokens_per_step": bad})
