"""`specgate bench` smoke test on real servers (emulated pair + gateway subprocess on 127.0.0.1), and the
pure statistics behind it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.bench.kit.stats import percentile
from gateway.bench.kit.workload import tiny_workload
from gateway.bench.replay.cli import bench_main
from gateway.bench.replay.oracle import oracle_entries
from gateway.bench.replay.run import scaled_priors
from gateway.bench.replay.summary import prediction_errors, summarize
from gateway.workloads.generate import Arrival, generate

SUMMARY_KEYS = {"requests", "errors", "mean_e2e_s", "p50_e2e_s", "p90_e2e_s", "p99_e2e_s", "mean_ttft_s",
                "p90_ttft_s", "output_tokens_per_s", "routed"}
REQUEST_KEYS = {"id", "backend", "class", "ttft_s", "e2e_s", "completion_tokens", "engine_steps", "status"}


def test_bench_smoke_results_shape(tmp_path: Path) -> None:
    workload = tmp_path / "tiny.jsonl"
    items = tiny_workload(workload)
    out, plot = tmp_path / "results.json", tmp_path / "plot.png"
    rc = bench_main(["--workload", str(workload), "--policies", "baseline,speculative,clairvoyant", "--out", str(out),
                     "--time-scale", "0.25", "--profile", "h200-ngram", "--plot", str(plot),
                     "--request-timeout", "30"])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["profile"] == "h200-ngram" and doc["workload"] == str(workload)
    assert set(doc["policies"]) == {"baseline", "speculative", "clairvoyant"}
    for name, result in doc["policies"].items():
        summary = result["summary"]
        assert set(summary) >= SUMMARY_KEYS
        assert summary["requests"] == len(items) and summary["errors"] == 0
        assert summary["mean_e2e_s"] > 0 and summary["p50_e2e_s"] <= summary["p99_e2e_s"]
        assert set(summary["routed"]) == {"baseline", "speculative"}
        assert sum(summary["routed"].values()) == len(items)
        assert len(result["requests"]) == len(items)
        for rec in result["requests"]:
            assert set(rec) >= REQUEST_KEYS
            assert rec["status"] == "200" and rec["completion_tokens"] > 0
            assert 1 <= rec["engine_steps"] <= rec["completion_tokens"]
            assert rec["ttft_s"] <= rec["e2e_s"]
        if name != "clairvoyant":
            assert summary["routed"][name] == len(items)
    base = doc["policies"]["baseline"]["requests"]
    assert all(r["engine_steps"] == r["completion_tokens"] for r in base)  # one token per baseline step
    assert plot.stat().st_size > 10_000
    assert (tmp_path / "results-logs" / "oracle.json").exists()


def test_bench_rejects_bad_arguments(tmp_path: Path) -> None:
    assert bench_main(["--workload", "no-such-workload", "--out", str(tmp_path / "r.json")]) == 2
    assert bench_main(["--workload", "demo-mixed", "--policies", "fastest", "--out", str(tmp_path / "r.json")]) == 2


def test_oracle_knows_copying_beats_prose() -> None:
    items = generate(30, "code_edit=1,creative=1", Arrival(rate=5.0), seed=9)
    oracle = oracle_entries(items, "h200-ngram")
    tps = {kind: [oracle[i.id]["tokens_per_step"] for i in items if i.kind == kind] for kind in ("code_edit",
                                                                                                 "creative")}
    assert min(tps["code_edit"]) >= 1.0 and sum(tps["code_edit"]) / len(tps["code_edit"]) > 2.0
    assert sum(tps["creative"]) / len(tps["creative"]) < 1.5
    assert all(v["output_tokens"] >= 1 for v in oracle.values())


def test_percentiles_and_summary() -> None:
    assert percentile([], 50) is None
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([5.0], 99) == 5.0
    records = [
        {"id": "a", "status": "200", "e2e_s": 1.0, "ttft_s": 0.1, "completion_tokens": 10, "engine_steps": 4,
         "backend": "speculative", "sent_s": 0.0},
        {"id": "b", "status": "200", "e2e_s": 3.0, "ttft_s": 0.3, "completion_tokens": 30, "engine_steps": 30,
         "backend": "baseline", "sent_s": 1.0},
        {"id": "c", "status": "503", "e2e_s": 0.01, "backend": "baseline", "sent_s": 2.0},
    ]
    s = summarize(records)
    assert s["requests"] == 3 and s["errors"] == 1
    assert s["mean_e2e_s"] == 2.0 and s["routed"] == {"baseline": 2, "speculative": 1}
    assert s["output_tokens_per_s"] == pytest.approx(40 / 4.0)
    assert s["speculative_tokens_per_step"] == 2.5


def test_prediction_errors_from_log_lines() -> None:
    lines: list[dict[str, Any]]
    lines = [{"event": "request", "reason": "predicted_faster", "predicted_s": 1.1, "observed_s": 1.0, "status": "200"},
             {"event": "request", "reason": "explore", "predicted_s": 0.5, "observed_s": 1.0, "status": "200"},
             {"event": "listening"}]
    out = prediction_errors(lines, 1.0)
    assert out["predictions"] == 2 and out["reasons"] == {"explore": 1, "predicted_faster": 1}
    assert out["median_error_ratio"] == pytest.approx(0.3)


def test_priors_scale_with_time() -> None:
    assert scaled_priors(1.0) == {}
    env = scaled_priors(0.5)
    assert float(env["SPECGATE_PRIOR_STEP_S"]) == pytest.approx(0.0025)
    assert all(k.startswith("SPECGATE_PRIOR_") for k in env)


def test_percentile_methods_are_named() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50, "linear") == pytest.approx(2.5)
    assert percentile(values, 50, "nearest_rank") == 2.0
    assert percentile(values, 50, "floor_index") == 3.0
    assert percentile(values, 99, "floor_index") == 4.0


def test_robust_table_pairs_static_and_adaptive_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from gateway.bench.robust_table import main as robust_table

    def req(rid: str, e2e: float, backend: str, repeat: int = 0) -> dict[str, object]:
        return {"id": rid, "e2e_s": e2e, "backend": backend, "repeat": repeat}

    common = {"profile": "h200-ngram", "workload": "/x/fresh-a.jsonl", "time_scale": 1.0}
    static = {**common, "policies": {"baseline": {"summary": {"mean_e2e_s": 1.0}},
                                     "speculative": {"summary": {"mean_e2e_s": 0.8}}}}
    runs = [req(f"r{i}", e2e, "speculative" if i % 2 else "baseline", repeat)
            for repeat, e2e in ((1, 0.8), (2, 0.84), (3, 0.9)) for i in range(4)]
    adaptive = {**common, "policies": {"adaptive": {"requests": runs}}}
    (tmp_path / "static--fresh-a.json").write_text(json.dumps(static))
    (tmp_path / "adaptive--fresh-a.json").write_text(json.dumps(adaptive))
    (tmp_path / "static--unpaired.json").write_text(json.dumps(static))
    assert robust_table([str(tmp_path)]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if "| fresh-a |" in line]
    assert "| [0.8, 0.84, 0.9] | 1.05 | 1.125 | [50.0, 50.0, 50.0] |" in row  # median and worst over 0.8


def test_mix_accuracy_compares_the_held_mix_with_the_statics(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from gateway.bench.mix_accuracy import main as mix_accuracy
    from gateway.bench.mix_accuracy import measured_ratio

    def reqs(e2e: list[float]) -> list[dict[str, object]]:
        return [{"e2e_s": x} for x in e2e]

    # only the last 64 requests count: the first one (100 s on the baseline) is outside the window
    static = {"policies": {"baseline": {"requests": reqs([100.0] + [1.2] * 64)},
                           "speculative": {"requests": reqs([0.1] + [1.0] * 64)}}}
    assert measured_ratio(static) == pytest.approx(1.2)
    step = {"base_s": 0.005, "per_request_s": 0.0001, "observations": 7}
    adaptive = {"policies": {"adaptive": {"learned": {
        "regimes": {"pair-0": {"role": "speculative", "mix_ratio": 1.32, "mix": {"load": 3.0}}},
        "learner": {"step_models": {"baseline": step, "speculative": step}}}}}}
    (tmp_path / "static--cell.json").write_text(json.dumps(static))
    (tmp_path / "adaptive--cell.json").write_text(json.dumps(adaptive))
    (tmp_path / "adaptive--unpaired.json").write_text(json.dumps(adaptive))
    assert mix_accuracy([str(tmp_path)]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| cell | speculative")]
    assert "| 1.320 | 1.200 | 1.100 | 3.0 |" in row
    assert "baseline 5.00 + 0.100 (7)" in row


def test_evaluate_robust_summarizes_each_cell_with_the_regimes_accuracy(tmp_path: Path) -> None:
    from gateway.bench.evaluate import main as evaluate

    def reqs(e2e: float, backend: str, repeat: int | None = None) -> list[dict[str, object]]:
        return [{"e2e_s": e2e, "backend": backend, "repeat": repeat} for _ in range(10)]

    learned = {"regimes": {"pair-0": {"role": "baseline", "mix_ratio": 0.9, "mix": {"load": 1.0}}}}
    doc = {"profile": "h200-ngram", "workload": "/w/mixed-low.jsonl", "time_scale": 1.0, "policies": {
        "baseline": {"summary": {"mean_e2e_s": 1.0}, "requests": reqs(1.0, "baseline")},
        "speculative": {"summary": {"mean_e2e_s": 1.25}, "requests": reqs(1.25, "speculative")},
        "adaptive": {"requests": reqs(1.02, "baseline", 1) + reqs(1.0, "baseline", 2), "learned": learned}}}
    (tmp_path / "robust--h200-ngram--mixed-low--x1.json").write_text(json.dumps(doc))
    assert evaluate(["--robust", "--only-summarize", "--workloads", "mixed-low", "--scales", "1",
                     "--out-dir", str(tmp_path)]) == 0
    page = (tmp_path / "ROBUST.md").read_text()
    assert "| 1.01 | 1.02 | [0.0, 0.0] |" in page  # median and worst of the two seeds over the baseline's 1.0
    (accuracy,) = [line for line in page.splitlines() if line.startswith("| mixed-low x1 |")]
    assert "| baseline | 0.900 | 0.800 | 1.125 | 1.0 |" in accuracy  # 1.0 / 1.25 measured
