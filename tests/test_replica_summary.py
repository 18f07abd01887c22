"""gateway/bench/fleet/replica_summary.py on hand-made result files: ratios to one replica, shares, restart windows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gateway.bench.fleet.replica_summary import markdown, summarize


def _doc(e2e: float, n_spec: int, restarts: list[dict[str, float]] | None = None, n: int = 300) -> dict[str, Any]:
    requests: list[dict[str, Any]]
    requests = [{"id": str(i), "sent_s": i * 0.1, "e2e_s": e2e * (2 if 150 <= i < 160 else 1), "status": "200",
                 "backend": "speculative" if i < n_spec else "baseline",
                 "reason": "explore 1.1x" if i in (155, 157) else "predicted_faster"} for i in range(n)]
    mean = sum(r["e2e_s"] for r in requests) / n
    return {"policies": {"adaptive": {
        "summary": {"mean_e2e_s": mean, "p90_e2e_s": e2e, "requests": n,
                    "routed": {"speculative": n_spec, "baseline": n - n_spec}},
        "requests": requests, "restarts": [restarts or []]}}}


def test_summary_compares_each_seed_with_one_replica_and_reads_restart_windows(tmp_path: Path) -> None:
    (tmp_path / "wl-g1-seed1.json").write_text(json.dumps(_doc(1.0, 150)))
    (tmp_path / "wl-g2-seed1.json").write_text(json.dumps(_doc(1.0, 90)))
    logs = tmp_path / "wl-g2-seed1-logs"
    logs.mkdir()
    for i, roles in enumerate((["speculative"] * 3 + ["baseline"], ["baseline"] * 2)):
        (logs / f"gateway-adaptive-r{i}.log").write_text("not json\n" + "\n".join(
            json.dumps({"event": "request", "backend": role}) for role in roles))
    rolling = _doc(1.0, 150, [{"replica": 0, "stop_s": 15.0, "ready_s": 14.95}])
    (tmp_path / "wl-g2-rolling-peers-seed1.json").write_text(json.dumps(rolling))
    (tmp_path / "unrelated.json").write_text("{}")
    summary = summarize(tmp_path)
    rows = {r["config"]: r for r in summary["replicas"]}
    assert set(rows) == {"g1", "g2"}
    assert rows["g1"]["ratio_to_one"] == [1.0]
    g2 = rows["g2"]
    assert g2["ratio_to_one"] == [round(_doc(1.0, 90)["policies"]["adaptive"]["summary"]["mean_e2e_s"]
                                        / _doc(1.0, 150)["policies"]["adaptive"]["summary"]["mean_e2e_s"], 3)]
    assert g2["share_points_vs_one"] == [-20.0] and g2["replica_speculative_shares"] == [[0.75, 0.0]]
    (roll,) = summary["rolling"]
    (restart,) = roll["restarts"]
    # requests 50..149 before the stop, 150..249 after the replica was back: the slow ten and both probes after
    assert restart["before"] == restart["after"] == 100
    assert (restart["probes_before"], restart["probes_after"]) == (0, 2)
    assert restart["mean_after_over_before"] == 1.1
    assert restart["mean_after_over_no_restart"] == 1.0  # the same requests were as slow without a restart
    assert "| wl | g2 | 1 |" in markdown(summary)
