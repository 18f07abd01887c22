"""Walls that keep the design honest: the pure core does no I/O and the emulator is independent."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent / "gateway"
PURE = ["classify.py", "costmodel.py", "learner.py", "stepfit.py", "policy.py", "regime.py", "vllm_metrics.py",
        "protocol.py"]
FORBIDDEN_IN_PURE = {"aiohttp", "asyncio", "time", "socket", "os", "random", "logging", "gateway.backends",
                     "gateway.proxy", "gateway.app"}
ROUTING = {"gateway.classify", "gateway.costmodel", "gateway.learner", "gateway.policy", "gateway.router"}


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("name", PURE)
def test_pure_core_has_no_io(name: str) -> None:
    found = {m for m in imports(ROOT / name) if m.split(".")[0] in FORBIDDEN_IN_PURE or m in FORBIDDEN_IN_PURE}
    assert not found, f"{name} imports {found}"


def test_emulator_imports_no_routing_code() -> None:
    files = list((ROOT / "emulator").rglob("*.py"))
    assert files, "the emulator package is missing"
    for path in files:
        assert not imports(path) & ROUTING, f"{path} imports routing code"


def test_routing_code_imports_no_emulator_or_bench() -> None:
    for path in ROOT.glob("*.py"):
        bad = {m for m in imports(path) if m.startswith(("gateway.emulator", "gateway.bench", "gateway.workloads"))}
        assert not bad, f"{path.name} imports {bad}"


def test_no_module_is_huge() -> None:
    for path in ROOT.rglob("*.py"):
        assert len(path.read_text().splitlines()) < 800, path
