"""Build hook: `SPECGATE_COMPILE=1 pip install .` compiles the request path with mypyc (as black and mypy ship).

The compiled modules (`gateway.COMPILED_MODULES`) are the routing core (plain data in, decision out) and the request
path's own modules around it. They behave the same compiled or not (tests/test_compiled.py builds the compiled
wheel and runs the core's and the gateway's tests against it); compiled, a request costs less CPU (docs/results.md,
"Overhead"). Without the variable everything stays pure Python, and an editable install (`pip install -e`) always
does: a compiled copy beside its source would shadow later edits.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Any

from setuptools import setup

ROOT = Path(__file__).parent


def compiled_modules() -> list[str]:
    """`gateway.COMPILED_MODULES`, read without importing the package."""
    tree = ast.parse((ROOT / "gateway" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMPILED_MODULES":
            return [f"gateway/{name.replace('.', '/')}.py" for name in ast.literal_eval(node.value)]
    raise RuntimeError("gateway/__init__.py has no COMPILED_MODULES")


def ext_modules() -> list[Any]:
    if os.environ.get("SPECGATE_COMPILE", "").lower() not in {"1", "true", "yes"}:
        return []
    if "editable_wheel" in sys.argv:  # `pip install -e`: compiled copies beside the sources would shadow edits
        print("specgate: SPECGATE_COMPILE ignored for an editable install (it stays pure Python)", file=sys.stderr)
        return []
    from mypyc.build import mypycify

    # Not pyproject's [tool.mypy]: its pydantic plugin is not in the build environment, and these modules need none.
    # SPECGATE_COMPILE_OPT_LEVEL: the C compiler's -O (3 unless set); tests/test_compiled.py builds at 0, where the
    # same modules compile in a fraction of the time and behave the same (the level changes speed, not semantics)
    level = os.environ.get("SPECGATE_COMPILE_OPT_LEVEL", "3")
    return mypycify(["--config-file=", "--ignore-missing-imports", *compiled_modules()], opt_level=level)


setup(ext_modules=ext_modules())
