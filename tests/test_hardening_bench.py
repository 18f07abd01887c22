"""The issue-35 scenarios of the hostile bench (`python -m gateway.bench.faults.hardening`) run and report."""

from __future__ import annotations

from pathlib import Path

import pytest

from gateway.bench.faults.hardening import SCENARIOS

pytestmark = pytest.mark.asyncio


async def test_the_state_and_key_scenarios_run_and_hold(tmp_path: Path) -> None:
    state = await SCENARIOS["infinite_count_state"](tmp_path, 0.5, 2)
    assert state["benign"]["sent"] == state["benign"]["completed"] > 0
    assert state["ignored"] and state["exit_status"] == 0
    key = await SCENARIOS["blank_admin_key"](tmp_path, 0.5, 2)
    assert key["started"] is False and "blank" in str(key["error"])
