"""Real peer routers (`specgate bench --peers`): vllm-router in front of a two-server emulated fleet, through
`specgate bench`, with a tiny workload. The routers come with the dev extra (`pip install -e '.[dev]'`), so a
missing binary fails the test (under CI=true and everywhere else) instead of skipping it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway.bench.peers.spec import INSTALL_HINT, parse_peer, parse_peer_args, parse_peers
from gateway.bench.replay.cli import bench_main
from gateway.workloads.generate import Arrival, generate
from gateway.workloads.items import write_workload


def _require(router: str) -> None:
    if parse_peer(f"{router}:round_robin").binary() is None:
        pytest.fail(f"{router} is required (the dev extra installs it: {INSTALL_HINT})")


def _workload(tmp_path: Path, n: int = 8) -> Path:
    path = tmp_path / "tiny.jsonl"
    write_workload(generate(n, "mixed", Arrival(rate=8.0), seed=5, id_prefix="peer"), path)
    return path


def test_peer_round_robin_serves_every_request_through_specgate_bench(tmp_path: Path) -> None:
    _require("vllm-router")
    out = tmp_path / "res.json"
    rc = bench_main(["--workload", str(_workload(tmp_path)), "--fleet", "baseline,speculative", "--policies", "",
                     "--peers", "vllm-router:round_robin", "--time-scale", "0.5", "--out", str(out)])
    assert rc == 0
    doc = json.loads(out.read_text())
    result = doc["policies"]["vllm-router:round_robin"]
    assert result["summary"]["requests"] == 8 and result["summary"]["errors"] == 0
    (peer,) = result["peer"]
    assert peer["started"] and peer["request_ids_seen"] == 1.0  # x-request-id reached the emulator
    instances = [r["instance"] for r in result["requests"]]
    assert sorted(set(instances)) == ["baseline-0", "speculative-0"]
    assert abs(instances.count("baseline-0") - instances.count("speculative-0")) <= 1  # round robin
    assert all(r["backend"] == r["instance"].rsplit("-", 1)[0] for r in result["requests"])
    # the emulated speculative server drafted for the requests it got (their references came through)
    assert sum(e["speculative-0"]["drafts"] for e in result["emulator"]) > 0


def test_a_peer_that_fails_to_start_is_reported_not_dropped(tmp_path: Path) -> None:
    _require("vllm-router")
    out = tmp_path / "res.json"
    rc = bench_main(["--workload", str(_workload(tmp_path, 4)), "--fleet", "baseline,speculative", "--policies", "",
                     "--peers", "vllm-router:power_of_two", "--peer-arg", "vllm-router=--no-such-flag",
                     "--time-scale", "0.5", "--out", str(out)])
    assert rc == 1
    result = json.loads(out.read_text())["policies"]["vllm-router:power_of_two"]
    (peer,) = result["peer"]
    assert not peer["started"] and "exited with status" in peer["error"] and "no-such-flag" in peer["error"]
    assert result["summary"]["errors"] == result["summary"]["requests"] == 4
    assert {r["status"] for r in result["requests"]} == {"peer_failed"}


def test_peer_names_are_checked() -> None:
    assert [p.name for p in parse_peers("vllm-router:cache_aware, sglang-router:cache_aware@2xbaseline")] == [
        "vllm-router:cache_aware", "sglang-router:cache_aware@2xbaseline"]
    for bad in ("vllm-router", "vllm-router:fastest", "nginx:round_robin", "sglang-router:kv_aware"):
        with pytest.raises(ValueError):
            parse_peer(bad)
    assert parse_peer_args(["vllm-router=--cache-threshold=0.3"]) == {"vllm-router": ["--cache-threshold=0.3"]}
    with pytest.raises(ValueError):
        parse_peer_args(["haproxy=--x"])


def _policy(mean: float | None, requests: list[dict[str, object]] | None = None) -> dict[str, object]:
    return {"summary": {"mean_e2e_s": mean}, "requests": requests or []}


def test_fleet_cells_report_adaptive_over_the_best_peer(tmp_path: Path) -> None:
    from gateway.bench.fleet.cells import fleet_markdown, fleet_row

    adaptive = [{"repeat": k, "e2e_s": e, "backend": "speculative"} for k, e in ((1, 0.5), (2, 0.6), (3, 0.7))]
    doc = {"workload": "w", "fleet": ["baseline", "speculative"], "time_scale": 1.0, "policies": {
        "least_loaded@2xbaseline": _policy(0.8), "least_loaded@2xspeculative": _policy(0.9),
        "adaptive": _policy(0.6, adaptive), "vllm-router:cache_aware": _policy(0.55),
        "vllm-router:power_of_two@2xbaseline": _policy(0.5), "sglang-router:cache_aware": _policy(None)}}
    path = tmp_path / "cell.json"
    path.write_text(json.dumps(doc))
    row = fleet_row(path)
    assert row["best_static"] == "least_loaded@2xbaseline"  # a peer with a layout is not a static fleet
    assert row["best_peer"] == "vllm-router:power_of_two@2xbaseline"
    assert row["adaptive_vs_best_peer"] == 1.2  # median of the seeds 0.6 over 0.5
    table = fleet_markdown([row])
    assert "sglang-router:cache_aware did not start" in table and "| 1.2 |" in table


def test_evalset_rows_compare_with_the_best_static_and_peer_and_find_the_losing_class() -> None:
    from gateway.bench.evalset import WINDOWS, cell_row, cells, loss_markdown, loss_rows, statics

    assert len({w.source for w in WINDOWS}) == 4 and len(WINDOWS) >= 12
    assert {w.rate_scale for w in WINDOWS if w.source == "azure-code"} >= {0.5, 1.0, 2.0}
    assert len(cells(["a", "b"], ["mixed-low"], ["1gpu", "1+1", "2+2", "4+4"])) == 12
    assert statics(None) == ["baseline", "speculative"]
    assert statics("2xbaseline,2xspeculative") == ["least_loaded@4xbaseline", "least_loaded@4xspeculative"]

    def req(rid: str, kind: str, e2e: float, backend: str, repeat: int = 0) -> dict[str, object]:
        return {"id": rid, "kind": kind, "e2e_s": e2e, "backend": backend, "status": "200", "repeat": repeat}

    adaptive = [req("1", "chat", 1.0, "speculative", 1), req("2", "sql", 0.2, "speculative", 1),
                req("1", "chat", 1.2, "speculative", 2), req("2", "sql", 0.2, "speculative", 2)]
    peer = [req("1", "chat", 0.5, "baseline"), req("2", "sql", 0.3, "speculative")]
    doc = {"workload": "w", "cell": {"name": "w", "fleet": "1gpu"}, "policies": {
        "baseline": {"summary": {"mean_e2e_s": 0.7, "errors": 0}, "requests": []},
        "speculative": {"summary": {"mean_e2e_s": 0.65, "errors": 0}, "requests": []},
        "adaptive": {"summary": {"mean_e2e_s": 0.65, "errors": 0, "requests": 4}, "requests": adaptive},
        "vllm-router:power_of_two": {"summary": {"mean_e2e_s": 0.4, "errors": 0}, "requests": peer},
        "sglang-router:cache_aware": {"summary": {"mean_e2e_s": None, "errors": 2}, "requests": []}}}
    row = cell_row(doc)
    assert row["adaptive_seeds"] == [0.6, 0.7] and row["best_static"] == "speculative"
    assert row["vs_best_static"] == 1.0 and row["best_peer"] == "vllm-router:power_of_two"
    assert row["vs_best_peer"] == 1.625 and row["to_speculative_pct"] == [100, 100]
    by_kind = {k["kind"]: k for k in loss_rows(doc, "vllm-router:power_of_two")}
    assert by_kind["chat"]["gap_share_pct"] == 125 and by_kind["sql"]["gap_share_pct"] == -25
    assert (by_kind["chat"]["adaptive_to_spec_pct"], by_kind["chat"]["rival_to_spec_pct"]) == (100, 0)
    assert "| chat | 1 | 1.0 | 0.5 | 100 | 0 | 125 |" in loss_markdown([doc], [row])
