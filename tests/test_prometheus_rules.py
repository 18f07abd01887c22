"""Prometheus config and alerting rules, checked and unit-tested with promtool; dashboard PromQL parsed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PROM = ROOT / "deploy" / "prometheus"


def require(binary: str) -> str:
    """Path of a binary from Debian's `prometheus` package; missing fails under CI=true, else skips."""
    path = shutil.which(binary)
    if path is None:
        reason = f"{binary} not installed (apt-get install -y prometheus)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def promtool(*args: str, cwd: Path = ROOT) -> str:
    proc = subprocess.run([require("promtool"), *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def test_prometheus_config_is_valid() -> None:
    out = promtool("check", "config", "prometheus.yml", cwd=PROM)
    assert "SUCCESS" in out


def test_alerting_rules_are_valid() -> None:
    promtool("check", "rules", str(PROM / "rules" / "specgate.yml"))


def test_alerting_rules_unit_tests_pass() -> None:
    promtool("test", "rules", str(PROM / "tests" / "specgate_test.yml"))


def test_the_four_alerts_the_issue_asks_for_exist() -> None:
    rules = yaml.safe_load((PROM / "rules" / "specgate.yml").read_text())
    alerts = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    assert {"SpecgateBackendDown", "SpecgateAcceptanceCollapsed", "SpecgateGatewayOverheadHigh",
            "SpecgateErrorRateHigh"} <= alerts


def test_every_dashboard_expression_parses(tmp_path: Path, dashboard_build: ModuleType) -> None:
    """Each panel's PromQL (variables substituted) as a recording rule: promtool parses every one."""

    build = dashboard_build
    targets = build.dashboard_targets(json.loads((ROOT / "dashboards" / "specgate.json").read_text()))
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": build.substitute(expr)} for i, (_, expr) in enumerate(targets)
    ]}]}
    path = tmp_path / "dashboard_rules.yml"
    path.write_text(yaml.safe_dump(rules))
    out = promtool("check", "rules", str(path))
    assert f"{len(targets)} rules found" in out
