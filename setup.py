"""Build hook: `SPECGATE_COMPILE=1 pip install .` compiles the routing core with mypyc (as black and mypy ship).

The compiled modules (`gateway.CORE_MODULES`) are the pure ones every request runs through: plain data in,
decision out, no I/O. They behave the same compiled or not (tests/test_compiled.py builds the compiled wheel and
runs their tests against it); compiled, a request costs less CPU (docs/results.md, "Overhead"). Without the
variable everything stays pure Python; build an editable install without it, or an edited module would be
shadowed by its stale compiled copy.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).parent


def core_modules() -> list[str]:
    """`gateway.CORE_MODULES`, read without importing the package."""
    tree = ast.parse((ROOT / "gateway" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "CORE_MODULES":
            return [f"gateway/{name}.py" for name in ast.literal_eval(node.value)]
    raise RuntimeError("gateway/__init__.py has no CORE_MODULES")


def ext_modules() -> list[Any]:
    if os.environ.get("SPECGATE_COMPILE", "").lower() not in {"1", "true", "yes"}:
        return []
    from mypyc.build import mypycify

    # Not pyproject's [tool.mypy]: its pydantic plugin is not in the build environment, and the core needs none.
    return mypycify(["--config-file=", "--ignore-missing-imports", *core_modules()], opt_level="3")


setup(ext_modules=ext_modules())
