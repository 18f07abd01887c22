"""Walls that keep the design honest: the pure core does no I/O and the emulator is independent."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent / "gateway"
CORE = ROOT / "core"
# The core may import the standard library's pure parts and itself, nothing else of ours and nothing that does I/O.
FORBIDDEN_IN_CORE = {"aiohttp", "asyncio", "time", "socket", "os", "random", "logging", "subprocess", "threading",
                     "urllib", "http", "ssl", "select", "selectors", "pathlib", "io", "multiprocessing", "httptools",
                     "uvloop", "prometheus_client", "datetime"}
ROUTING = {"gateway.core.classify", "gateway.core.costmodel", "gateway.core.learner", "gateway.core.policy",
           "gateway.router"}


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            if node.module == "gateway" or node.module.startswith("gateway."):
                names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _core_modules() -> list[Path]:
    found = sorted(CORE.glob("*.py"))
    assert len(found) > 8, "the pure core's folder is missing or empty"
    return found


@pytest.mark.parametrize("path", _core_modules(), ids=lambda p: p.name)
def test_the_core_folder_does_no_io_and_imports_only_itself(path: Path) -> None:
    names = imports(path)
    io = {m for m in names if m.split(".")[0] in FORBIDDEN_IN_CORE and m != "prometheus_client.parser"}
    assert not io, f"core/{path.name} imports {io}"
    ours = {m for m in names if m.startswith("gateway") and not m.startswith("gateway.core")}
    assert not ours, f"core/{path.name} reaches out of the core: {ours}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _import_graph() -> dict[str, set[str]]:
    """Module -> the modules of ours it imports. `from pkg import sub` is an edge to `pkg.sub` alone; a package's
    `__init__` re-exporting its submodules is not a circle with them (Python imports the package first anyway)."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                targets = subs or [node.module]
            edges.update(t for t in targets if t in modules and t != name and not name.startswith(t + "."))
        graph[name] = edges
    return graph


def test_no_import_circles_in_the_package() -> None:
    graph = _import_graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            # a package's __init__ importing its own submodules is not a circle of ours
            if len(component) > 1:
                circles.append(sorted(component))

    for node in graph:
        if node not in index:
            visit(node)
    assert circles == [], f"import circles: {circles}"


def test_emulator_imports_no_routing_code() -> None:
    files = list((ROOT / "emulator").rglob("*.py"))
    assert files, "the emulator package is missing"
    for path in files:
        assert not imports(path) & ROUTING, f"{path} imports routing code"


def test_routing_code_imports_no_emulator_or_bench() -> None:
    for path in [*ROOT.glob("*.py"), *CORE.glob("*.py")]:
        bad = {m for m in imports(path) if m.startswith(("gateway.emulator", "gateway.bench", "gateway.workloads"))}
        assert not bad, f"{path.name} imports {bad}"


MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
# Current offenders, to shrink: remove an entry once its module or function fits (the test says when).
LONG_MODULES: set[str] = set()
LONG_FUNCTIONS: set[str] = set()


def _sources() -> list[Path]:
    return sorted(p for d in (ROOT, ROOT.parent / "deploy") for p in d.rglob("*.py"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT.parent).as_posix()


def test_modules_stay_small() -> None:
    long = {_rel(p) for p in _sources() if len(p.read_text().splitlines()) > MAX_MODULE_LINES}
    assert long <= LONG_MODULES, f"over {MAX_MODULE_LINES} lines: {sorted(long - LONG_MODULES)}"
    assert long >= LONG_MODULES, f"now short enough, drop from LONG_MODULES: {sorted(LONG_MODULES - long)}"


def test_functions_stay_small() -> None:
    long = set()
    for path in _sources():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None \
                    and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                long.add(f"{_rel(path)}::{node.name}")
    assert long <= LONG_FUNCTIONS, f"over {MAX_FUNCTION_LINES} lines: {sorted(long - LONG_FUNCTIONS)}"
    assert long >= LONG_FUNCTIONS, f"now short enough, drop from LONG_FUNCTIONS: {sorted(LONG_FUNCTIONS - long)}"
