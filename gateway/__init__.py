"""specgate: an OpenAI-compatible gateway that routes each request to a baseline or a speculative vLLM server."""

from __future__ import annotations

import sys

__version__ = "0.1.0"

# Compiled by mypyc in a `SPECGATE_COMPILE=1` build (setup.py reads this list): the pure routing core, and the
# request path's own modules around it (the proxy, routing glue, the pool, accounting, metrics, the stream relay,
# the upstream glue).
COMPILED_MODULES = ("core.classify", "core.costmodel", "core.domain", "core.ewma", "core.learner", "core.learner_state",
                    "core.policy", "core.protocol", "core.regime", "core.saturation", "core.surge", "core.mix_window",
                    "core.stepfit", "router", "candidates", "accounting", "backends", "metrics", "streaming",
                    "accesslog", "upstream", "relay", "context", "proxy", "intake")


def compiled_modules() -> list[str]:
    """The modules this process runs compiled (imports them): empty for a pure-Python install."""
    import importlib

    found = []
    for name in COMPILED_MODULES:
        module = sys.modules.get(f"gateway.{name}") or importlib.import_module(f"gateway.{name}")
        if (getattr(module, "__file__", None) or "").endswith((".so", ".pyd")):
            found.append(name)
    return found


def build() -> str:
    """`0.1.0 (compiled: ...)` or `0.1.0 (pure Python)`, for `specgate --version`, logs and benchmark results."""
    compiled = compiled_modules()
    if not compiled:
        return f"{__version__} (pure Python)"
    if len(compiled) == len(COMPILED_MODULES):
        return f"{__version__} (compiled)"
    return f"{__version__} (compiled: {', '.join(compiled)})"
