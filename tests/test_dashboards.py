"""The Grafana dashboard: generated, importable, consistent with the metrics that really exist."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import yaml
from prometheus_client import CollectorRegistry

from gateway.metrics import Metrics

ROOT = Path(__file__).resolve().parents[1]
DASHBOARD = ROOT / "dashboards" / "specgate.json"
FIXTURES = Path(__file__).parent / "fixtures"  # real vLLM 0.26.0 /metrics (copied from ../shared/fixtures)


def dashboard() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return data


def test_committed_json_is_what_build_py_generates(dashboard_build: ModuleType) -> None:
    assert DASHBOARD.read_text() == dashboard_build.render(), "run: .venv/bin/python dashboards/build.py"


def test_dashboard_is_importable_shape() -> None:
    d = dashboard()
    assert d["uid"] and d["title"]
    assert d["schemaVersion"] >= 36
    variables = {v["name"]: v for v in d["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    for name in ("role", "class", "backend"):
        assert variables[name]["type"] == "query"
        assert variables[name]["includeAll"] and variables[name]["allValue"] == ".*"
        assert variables[name]["datasource"]["uid"] == "${datasource}"


def test_every_panel_has_targets_with_expr_and_ids_are_unique() -> None:
    d = dashboard()
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids)), "panel ids must be unique"
    graphs = [p for p in d["panels"] if p["type"] != "row"]
    assert len(graphs) >= 20
    for panel in graphs:
        assert panel["targets"], panel["title"]
        assert panel["datasource"]["uid"] == "${datasource}"
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)), panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip(), panel["title"]
            assert target["datasource"]["uid"] == "${datasource}"
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24 and pos["h"] > 0


def test_dashboard_covers_what_issue_5_asks_for(dashboard_build: ModuleType) -> None:
    exprs = " ".join(e for _, e in dashboard_build.dashboard_targets(dashboard()))
    for needle in (
        "specgate_requests_total", "specgate_decisions_total", "specgate_learned_tokens_per_step",
        "specgate_learned_acceptance_rate", "specgate_backend_acceptance_rate",
        "rate(vllm:spec_decode_num_accepted_tokens_total", "rate(vllm:spec_decode_num_draft_tokens_total",
        "specgate_time_to_first_token_seconds_bucket", "specgate_inter_chunk_seconds_bucket",
        "specgate_request_duration_seconds_bucket", "specgate_predicted_duration_seconds",
        "specgate_inflight_requests", "specgate_backend_running_requests", "specgate_backend_waiting_requests",
        "specgate_backend_kv_cache_usage_ratio", "vllm:kv_cache_usage_perc", "specgate_gateway_overhead_seconds",
        "specgate_failovers_total", "specgate_upstream_errors_total", "specgate_backend_up", "histogram_quantile",
    ):
        assert needle in exprs, needle


def _exported_names() -> set[str]:
    registry = CollectorRegistry()
    Metrics(registry)
    names: set[str] = set()
    for family in registry.collect():
        names.add(family.name)
        names.update(sample.name for sample in family.samples)
        if family.type == "counter":
            names.add(family.name + "_total")
        if family.type == "histogram":
            names.update(family.name + s for s in ("_bucket", "_sum", "_count"))
    return names


def test_every_specgate_metric_in_the_dashboard_is_exported_by_the_gateway(dashboard_build: ModuleType) -> None:
    exprs = " ".join(e for _, e in dashboard_build.dashboard_targets(dashboard()))
    used = set(re.findall(r"\bspecgate_[a-z0-9_]+", exprs))
    missing = sorted(used - _exported_names())
    assert not missing, f"dashboard uses metrics gateway/metrics.py does not export: {missing}"


def test_every_vllm_metric_in_the_dashboard_exists_in_real_vllm_0_26(dashboard_build: ModuleType) -> None:
    real = (FIXTURES / "vllm-0.26.0-draft-model-metrics.txt").read_text()
    exprs = " ".join(e for _, e in dashboard_build.dashboard_targets(dashboard()))
    for name in sorted(set(re.findall(r"\bvllm:[a-z0-9_]+", exprs))):
        assert re.search(rf"^{re.escape(name)}[{{ ]", real, re.M), f"{name} not in real vLLM 0.26.0 /metrics"


def test_substitute_leaves_no_template_variables(dashboard_build: ModuleType) -> None:
    build = dashboard_build
    for _, expr in build.dashboard_targets(dashboard()):
        assert "$" not in build.substitute(expr), expr


def test_grafana_provisioning_parses_and_points_at_the_compose_mount() -> None:
    ds = yaml.safe_load((ROOT / "dashboards/provisioning/datasources/prometheus.yml").read_text())
    assert ds["datasources"][0]["type"] == "prometheus"
    prov = yaml.safe_load((ROOT / "dashboards/provisioning/dashboards/specgate.yml").read_text())
    path = prov["providers"][0]["options"]["path"]
    compose = yaml.safe_load((ROOT / "deploy/docker-compose.yml").read_text())
    mounts = compose["services"]["grafana"]["volumes"]
    assert f"../dashboards:{path}:ro" in mounts
    assert "../dashboards/provisioning:/etc/grafana/provisioning:ro" in mounts
