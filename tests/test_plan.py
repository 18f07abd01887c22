"""`specgate plan`: layouts, the analytic pruning pass, and a small end-to-end run on the emulator."""

from __future__ import annotations

import json
from pathlib import Path

from gateway.bench.plan import Shape, analytic_mean_s, layouts, main


def test_layouts_cover_every_split_and_pairs() -> None:
    names = [lay.name for lay in layouts(2)]
    assert names == ["2xbaseline", "1xbaseline+1xspeculative", "2xspeculative", "2xpair"]
    assert all(len(lay.entries) == 4 for lay in layouts(4, dynamic_k=True))
    dynk = [lay.name for lay in layouts(2, dynamic_k=True)][4:]
    assert dynk == ["1xbaseline+1xdynk", "2xdynk"]


def test_analytic_pass_prefers_speculation_for_predictable_text_and_baseline_for_sampled() -> None:
    greedy = [Shape(200, 200, 3.5)] * 50
    sampled = [Shape(200, 200, 1.0)] * 50
    by_name = {lay.name: lay for lay in layouts(2)}
    spec, base = by_name["2xspeculative"], by_name["2xbaseline"]
    assert analytic_mean_s(spec, greedy, 2.0) < analytic_mean_s(base, greedy, 2.0)
    assert analytic_mean_s(base, sampled, 2.0) < analytic_mean_s(spec, sampled, 2.0)
    mixed = by_name["1xbaseline+1xspeculative"]
    both = greedy + sampled
    assert analytic_mean_s(mixed, both, 2.0) < min(analytic_mean_s(spec, both, 2.0), analytic_mean_s(base, both, 2.0))


def test_plan_end_to_end_prunes_and_recommends(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    assert main(["--gpus", "2", "--loads", "1", "--limit", "16", "--time-scale", "0.1", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    replayed = {r["layout"] for r in doc["rows"]}
    assert replayed and not replayed & set(doc["pruned"])
    assert replayed | set(doc["pruned"]) == {lay.name for lay in layouts(2, dynamic_k=True)}
    assert "2xdynk" in doc["layouts"] and "1xbaseline+1xdynk" in doc["layouts"]
    assert doc["recommendation"]["1.0"] in replayed
    assert all(r["errors"] == 0 for r in doc["rows"])
