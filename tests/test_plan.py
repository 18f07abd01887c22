"""`specgate plan`: layouts, the analytic pruning pass, and a small end-to-end run on the emulator."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gateway.bench.plan import Shape, analytic_mean_s, layouts, main
from gateway.bench.plan.analytic import dynk_tokens_per_step
from gateway.bench.plan.cli import recommend, replay_time_scale, select
from gateway.bench.plan.layouts import speculating_gpus
from gateway.bench.plan.quick import describe, layout_sentence
from gateway.bench.plan.source import tilted_weights
from gateway.workloads.items import WorkloadItem


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


def test_repeats_keep_the_median_replay(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    argv = ["--gpus", "2", "--loads", "1", "--limit", "8", "--time-scale", "0.1", "--keep", "1", "--repeats", "3",
            "--no-dynamic-k", "--out", str(out)]
    assert main(argv) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert len(row["repeat_means_s"]) == 3 and row["repeat_means_s"] == sorted(row["repeat_means_s"])
    assert row["mean_e2e_s"] == row["repeat_means_s"][1]


def test_pruned_recommendation_is_made_among_the_kept_layouts_only() -> None:
    rows: list[dict[str, Any]] = [{"layout": name, "load": 1.0, "errors": 0, "mean_e2e_s": mean}
            for name, mean in (("2xbaseline", 1.0), ("2xspeculative", 0.8), ("1xbaseline+1xspeculative", 0.9))]
    analytic = {str(r["layout"]): {"1.0": 1.0} for r in rows}
    assert recommend(rows, analytic, [1.0], 0.01) == {"1.0": "2xspeculative"}
    assert recommend(rows, analytic, [1.0], 0.01, {"2xbaseline", "1xbaseline+1xspeculative"}) == {
        "1.0": "1xbaseline+1xspeculative"}
    assert recommend(rows, analytic, [1.0], 0.3) == {"1.0": "2xbaseline"}  # the simpler within the tie


@given(st.lists(st.integers(1, 2000), min_size=1, max_size=50), st.floats(0, 3000))
def test_tilted_weights_reach_the_measured_mean_within_the_range(lengths: list[int], target: float) -> None:
    w = tilted_weights(lengths, target)
    assert len(w) == len(lengths) and all(x >= 0 for x in w) and sum(w) > 0
    mean = sum(a * b for a, b in zip(w, lengths, strict=True)) / sum(w)
    clamped = min(max(target, min(lengths)), max(lengths))
    assert mean == pytest.approx(clamped, rel=1e-3, abs=1e-3 * (max(lengths) - min(lengths)) + 1e-9)


def test_dynamic_k_server_stops_drafting_under_load() -> None:
    assert dynk_tokens_per_step(3.5, 1.0) == 3.5
    assert dynk_tokens_per_step(3.5, 8.0) == 3.0  # γ = 2: at most 3 tokens a step
    assert dynk_tokens_per_step(3.5, 40.0) == 1.0
    by_name = {lay.name: lay for lay in layouts(2, dynamic_k=True)}
    base, spec, dynk = by_name["2xbaseline"], by_name["2xspeculative"], by_name["2xdynk"]
    modest = [Shape(200, 200, 2.0)] * 50  # speculation pays at low load, costs under load
    heavy = 60.0  # arrivals per second: dozens running on each server
    assert analytic_mean_s(dynk, modest, 0.5) == analytic_mean_s(spec, modest, 0.5) < analytic_mean_s(base, modest, 0.5)
    assert analytic_mean_s(dynk, modest, heavy) == pytest.approx(analytic_mean_s(base, modest, heavy), rel=1e-6)
    weak = [Shape(200, 200, 1.3)] * 50  # little drafted: under load the verification costs more than it saves
    assert analytic_mean_s(base, weak, heavy) < analytic_mean_s(spec, weak, heavy)
    greedy = [Shape(200, 200, 3.5)] * 50  # pays even in a big batch: turning drafts off under load loses
    assert analytic_mean_s(spec, greedy, heavy) < analytic_mean_s(dynk, greedy, heavy)


def test_quick_layout_sentence_names_a_layout_of_the_gpus() -> None:
    assert describe("3xbaseline+1xspeculative") == "1 speculative + 3 baseline"
    sentence = layout_sentence("demo-mixed", "h200-ngram", gpus=4)
    assert sentence is not None and sentence.startswith("On 4 GPUs of this traffic: ")
    counts = sentence.split(": ", 1)[1].split(" (")[0]
    assert sum(int(part.split()[0]) for part in counts.split(" + ")) == 4
    assert layout_sentence("/nonexistent/workload.jsonl", "h200-ngram") is None


def test_a_replay_never_sends_faster_than_the_wall_rate_cap() -> None:
    items = [WorkloadItem(f"r{i}", i * 0.1, "/v1/completions", {"prompt": "x"}) for i in range(11)]  # 10/s
    assert replay_time_scale(items, 0.2, 15.0) == pytest.approx(10 / 15)  # 50/s at 0.2 would be too fast
    assert replay_time_scale(items, 1.0, 15.0) == 1.0  # already slow enough
    assert replay_time_scale(items[:1], 0.2, 15.0) == 0.2


def test_a_burst_slows_the_replay_to_the_peak_rate_cap() -> None:
    """20 requests within 0.5 s every 20 s: the mean rate is low, the burst's is 40/s."""
    items = [WorkloadItem(f"r{b}-{i}", b * 20.0 + i * 0.025, "/v1/completions", {"prompt": "x"})
             for b in range(3) for i in range(20)]
    mean_only = replay_time_scale(items, 0.2, 15.0)
    assert mean_only == 0.2
    assert replay_time_scale(items, 0.2, 15.0, 60.0) == pytest.approx(10 / 0.25 / 60.0)  # 40/s at 0.67 = 60/s
    assert replay_time_scale(items, 2.0, 15.0, 60.0) == 2.0


def test_pruning_keeps_one_layout_of_the_other_family() -> None:
    """The analytic pass ranks splits against splits better than splits against one kind on every GPU: the last
    kept place goes to the closest of the other family when the closest are all of one."""
    analytic = {"4xbaseline": {"1": 1.3}, "2xbaseline+2xspeculative": {"1": 1.0},
                "3xbaseline+1xspeculative": {"1": 1.0},
                "1xbaseline+3xspeculative": {"1": 1.01}, "4xspeculative": {"1": 1.1}, "4xpair": {"1": 1.12}}
    names = list(analytic)
    kept, pruned = select(names, analytic, 1.15, 3)
    assert kept == ["2xbaseline+2xspeculative", "3xbaseline+1xspeculative", "4xspeculative"]
    assert "4xbaseline" in pruned and "1.30x" in pruned["4xbaseline"] and "not among" in pruned["4xpair"]
    assert select(names, analytic, 1.05, 3)[0] == ["2xbaseline+2xspeculative", "3xbaseline+1xspeculative",
                                                   "1xbaseline+3xspeculative"]  # none of the other family close
    assert select(names, analytic, 1.15, 1)[0] == ["2xbaseline+2xspeculative"]


def test_pruning_spans_the_numbers_of_speculating_gpus_before_the_closest() -> None:
    """The analytic pass puts splits with different numbers of speculating GPUs within ~2% of each other and
    leans to the baseline (bursty, 4 GPUs, 2x load: 3 + 1 first, 1 + 3 last; replayed 0.632 and 0.589 s). The
    kept places go to the closest of each number first, so 1 + 3 is replayed although two 3 + 1 are closer."""
    analytic = {"4xbaseline": {"2": 1.17}, "3xbaseline+1xspeculative": {"2": 1.000},
                "2xbaseline+2xspeculative": {"2": 1.004}, "1xbaseline+3xspeculative": {"2": 1.022},
                "4xspeculative": {"2": 1.25}, "4xpair": {"2": 1.17}, "3xbaseline+1xdynk": {"2": 1.001},
                "2xbaseline+2xdynk": {"2": 1.002}, "1xbaseline+3xdynk": {"2": 1.017}, "4xdynk": {"2": 1.23}}
    kept, pruned = select(list(analytic), analytic, 1.15, 3)
    assert kept == ["3xbaseline+1xspeculative", "2xbaseline+2xdynk", "1xbaseline+3xdynk"]
    assert "not among the 3 kept" in pruned["3xbaseline+1xdynk"]
    assert [speculating_gpus(n) for n in ("4xbaseline", "4xpair", "1xbaseline+3xdynk", "4xspeculative")] == [
        0, None, 3, 4]


def test_pruning_spans_only_what_the_analytic_pass_calls_a_tie() -> None:
    """demo-mixed, 2 GPUs (`--from`): spanning every number of speculating GPUs gave 2 baseline, 1.12x the best
    analytically and 1.14x replayed, the place of 1 + 1 speculative at 1.000x."""
    analytic = {"2xbaseline": {"1": 0.5906}, "1xbaseline+1xspeculative": {"1": 0.5262}, "2xspeculative": {"1": 0.6485},
                "2xpair": {"1": 0.5906}, "1xbaseline+1xdynk": {"1": 0.5259}, "2xdynk": {"1": 0.6431}}
    kept, _ = select(list(analytic), analytic, 1.15, 3)
    assert "1xbaseline+1xspeculative" in kept and "1xbaseline+1xdynk" in kept
    assert len(kept) == 3 and ("2xbaseline" in kept or "2xpair" in kept)  # the last place: the other family
