"""The two `vllm serve` command lines of a pair and the gateway environment that fronts them (stdlib, pure)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pair_sizing import MemorySplit, PairConfigError


@dataclass(frozen=True)
class PairConfig:
    target: str
    draft: str | None = None  # None: n-gram prompt lookup
    served_model_name: str | None = None
    num_speculative_tokens: int = 4
    prompt_lookup_max: int = 4
    prompt_lookup_min: int = 2
    host: str = "127.0.0.1"
    baseline_port: int = 8001
    speculative_port: int = 8002
    max_model_len: int | None = None
    speculative_extra: dict[str, Any] = field(default_factory=dict)
    extra_args: tuple[str, ...] = ()
    vllm: tuple[str, ...] = ("vllm",)


def speculative_config(cfg: PairConfig) -> dict[str, Any]:
    """The JSON for vLLM 0.26's `--speculative-config` (keys of vllm.config.SpeculativeConfig)."""
    if not 1 <= cfg.num_speculative_tokens <= 16:
        raise PairConfigError(f"num_speculative_tokens must be 1..16, got {cfg.num_speculative_tokens}")
    spec: dict[str, Any]
    if cfg.draft is None:
        if not 1 <= cfg.prompt_lookup_min <= cfg.prompt_lookup_max:
            raise PairConfigError("need 1 <= prompt_lookup_min <= prompt_lookup_max")
        spec = {"method": "ngram", "num_speculative_tokens": cfg.num_speculative_tokens,
                "prompt_lookup_max": cfg.prompt_lookup_max, "prompt_lookup_min": cfg.prompt_lookup_min}
    else:
        spec = {"method": "draft_model", "model": cfg.draft, "num_speculative_tokens": cfg.num_speculative_tokens}
    spec.update(cfg.speculative_extra)
    return spec


def build_commands(cfg: PairConfig, split: MemorySplit) -> tuple[list[str], list[str]]:
    """`vllm serve` argv for the baseline and for the speculative server."""
    if cfg.baseline_port == cfg.speculative_port:
        raise PairConfigError(f"baseline and speculative ports must differ (both {cfg.baseline_port})")
    for port in (cfg.baseline_port, cfg.speculative_port):
        if not 1 <= port <= 65535:
            raise PairConfigError(f"bad port {port}")

    def serve(port: int, fraction: float) -> list[str]:
        argv = [*cfg.vllm, "serve", cfg.target, "--host", cfg.host, "--port", str(port),
                "--gpu-memory-utilization", f"{fraction:.2f}"]
        if cfg.served_model_name:
            argv += ["--served-model-name", cfg.served_model_name]
        if cfg.max_model_len:
            argv += ["--max-model-len", str(cfg.max_model_len)]
        return argv + list(cfg.extra_args)

    baseline = serve(cfg.baseline_port, split.baseline_fraction)
    speculative = serve(cfg.speculative_port, split.speculative_fraction)
    speculative += ["--speculative-config", json.dumps(speculative_config(cfg), separators=(",", ":"))]
    return baseline, speculative


def local_url(cfg: PairConfig, port: int) -> str:
    host = "127.0.0.1" if cfg.host in ("0.0.0.0", "::", "") else cfg.host
    return f"http://{host}:{port}"


def gateway_env(cfg: PairConfig) -> dict[str, str]:
    """What `specgate serve` needs to front this pair."""
    return {
        "SPECGATE_BASELINE_URLS": local_url(cfg, cfg.baseline_port),
        "SPECGATE_SPECULATIVE_URLS": local_url(cfg, cfg.speculative_port),
        "SPECGATE_NUM_SPECULATIVE_TOKENS": str(cfg.num_speculative_tokens),
    }
