"""Which peer routers `specgate bench --peers` knows, and how each is started (flags read off their `--help`).

A peer is `ROUTER:POLICY`, optionally `@LAYOUT` for a fleet of its own as a specgate policy may name one:
`vllm-router:cache_aware`, `vllm-router:power_of_two`, `sglang-router:cache_aware`,
`vllm-router:round_robin@2xbaseline`. Both routers are Rust binaries on PyPI (`pip install -e '.[peers]'`):

- `vllm-router --worker-urls URL... --policy P --host H --port N --prometheus-port M` (vLLM production-stack's
  router; policies random, round_robin, cache_aware (its default), kv_aware, power_of_two, consistent_hash,
  sticky_least_loaded);
- `sglang-router launch --worker-urls URL... --policy P --host H --port N --prometheus-port M` (SGLang's
  gateway; random, round_robin, cache_aware (default), power_of_two, manual).

Everything else stays at the router's defaults, as a new user would run it; only the log level is lowered.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROUTERS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    # router -> (command before the flags, its policies, log level flag value)
    "vllm-router": (("vllm-router",), ("random", "round_robin", "cache_aware", "kv_aware", "power_of_two",
                                       "consistent_hash", "sticky_least_loaded"), "warning"),
    "sglang-router": (("sglang-router", "launch"), ("random", "round_robin", "cache_aware", "power_of_two", "manual"),
                      "warn"),
}
INSTALL_HINT = "pip install -e '.[peers]' (or: pip install vllm-router sglang-router)"


@dataclass(frozen=True, slots=True)
class PeerSpec:
    router: str
    policy: str
    layout: str = ""  # a fleet of its own (`2xbaseline+2xspeculative`), else the run's

    @property
    def name(self) -> str:
        return f"{self.router}:{self.policy}" + (f"@{self.layout}" if self.layout else "")

    def binary(self) -> str | None:
        """The router's executable: beside this Python (a venv's bin/, on PATH or not), else on PATH."""
        exe = ROUTERS[self.router][0][0]
        local = Path(sys.executable).parent / exe
        return str(local) if local.is_file() else shutil.which(exe)

    def command(self, binary: str, worker_urls: Sequence[str], port: int, metrics_port: int,
                extra: Sequence[str] = ()) -> list[str]:
        prefix, _, log_level = ROUTERS[self.router]
        return [binary, *prefix[1:], "--worker-urls", *worker_urls, "--policy", self.policy,
                "--host", "127.0.0.1", "--port", str(port), "--prometheus-port", str(metrics_port),
                "--log-level", log_level, *extra]


def is_peer(name: str) -> bool:
    return name.partition(":")[0] in ROUTERS


def parse_peer(text: str) -> PeerSpec:
    head, _, layout = text.strip().partition("@")
    router, sep, policy = head.partition(":")
    if router not in ROUTERS:
        raise ValueError(f"unknown peer router {router!r}; choose from {', '.join(ROUTERS)} (as ROUTER:POLICY)")
    policies = ROUTERS[router][1]
    if not sep or policy not in policies:
        raise ValueError(f"{router} policies are {', '.join(policies)}; got {text!r}")
    return PeerSpec(router, policy, layout)


def parse_peer_args(pairs: Sequence[str]) -> dict[str, list[str]]:
    """`ROUTER=FLAG` (repeatable; a flag with a value as one item, `--cache-threshold=0.3`) -> router -> flags."""
    out: dict[str, list[str]] = {}
    for pair in pairs:
        router, sep, flag = pair.partition("=")
        if not sep or router not in ROUTERS or not flag.startswith("-"):
            raise ValueError(f"--peer-arg expects ROUTER=--flag[=value] with ROUTER in {', '.join(ROUTERS)}, "
                             f"got {pair!r}")
        out.setdefault(router, []).append(flag)
    return out


def parse_peers(text: str | None) -> list[PeerSpec]:
    return [parse_peer(p) for p in (text or "").split(",") if p.strip()]
