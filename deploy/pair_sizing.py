"""Sizes for a baseline + speculative vLLM pair on one GPU (stdlib only, pure).

A model's weights and KV bytes per token come from its HF `config.json`; `split_gpu_memory` turns the two
servers' needs into the `--gpu-memory-utilization` of each, sharing the spare memory out as KV cache.
`launch_pair.py` is the command that uses them.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIB = 1024**3
MIN_DRAFT_RATIO = 10.0
MAX_DRAFT_RATIO = 50.0
DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float8": 1, "fp8": 1, "int8": 1}


class PairConfigError(ValueError):
    """An input that cannot give a working pair; the message says what to change."""


# ---------------------------------------------------------------------------------------------- sizes
@dataclass(frozen=True)
class ModelSize:
    params: int
    weights_gib: float
    kv_bytes_per_token: int
    vocab_size: int | None


def model_size_from_config(config: dict[str, Any], dtype_bytes: int | None = None) -> ModelSize:
    """Parameter count, weight bytes and KV bytes per token of a decoder-only HF config (Llama-like)."""
    try:
        hidden = int(config["hidden_size"])
        layers = int(config["num_hidden_layers"])
        heads = int(config["num_attention_heads"])
        vocab = int(config["vocab_size"])
        inter = int(config.get("intermediate_size", 4 * hidden))
    except KeyError as exc:
        raise PairConfigError(f"model config lacks {exc.args[0]!r}: pass the size explicitly") from None
    kv_heads = int(config.get("num_key_value_heads", heads))
    head_dim = int(config.get("head_dim") or hidden // heads)
    if dtype_bytes is None:
        dtype_bytes = DTYPE_BYTES.get(str(config.get("torch_dtype", "bfloat16")), 2)
    attn = hidden * heads * head_dim * 2 + hidden * kv_heads * head_dim * 2
    mlp = 3 * hidden * inter
    per_layer = attn + mlp + 2 * hidden
    embed = vocab * hidden * (1 if config.get("tie_word_embeddings", False) else 2)
    params = layers * per_layer + embed + hidden
    kv_per_token = 2 * layers * kv_heads * head_dim * dtype_bytes
    return ModelSize(params, params * dtype_bytes / GIB, kv_per_token, vocab)


def read_model_config(model: str) -> dict[str, Any] | None:
    """config.json of a local model directory, or None for a hub name / missing file."""
    path = Path(model) / "config.json"
    if not path.is_file():
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def check_draft_compatible(target: str, draft: str) -> None:
    """Same vocabulary and tokenizer, when both are local directories; raises PairConfigError otherwise."""
    tcfg, dcfg = read_model_config(target), read_model_config(draft)
    if tcfg is not None and dcfg is not None and tcfg.get("vocab_size") != dcfg.get("vocab_size"):
        raise PairConfigError(
            f"draft vocab_size {dcfg.get('vocab_size')} != target vocab_size {tcfg.get('vocab_size')}: "
            "the draft must use the target's tokenizer (vLLM verifies token ids)"
        )
    tok_t, tok_d = Path(target) / "tokenizer.json", Path(draft) / "tokenizer.json"
    if tok_t.is_file() and tok_d.is_file():
        digest_t = hashlib.sha256(tok_t.read_bytes()).hexdigest()
        digest_d = hashlib.sha256(tok_d.read_bytes()).hexdigest()
        if digest_t != digest_d:
            raise PairConfigError(f"{tok_d} differs from {tok_t}: the draft must use the target's tokenizer")


# --------------------------------------------------------------------------------------- memory split
@dataclass(frozen=True)
class MemorySplit:
    """`--gpu-memory-utilization` of each server and what it leaves for KV cache."""

    baseline_fraction: float
    speculative_fraction: float
    baseline_kv_gib: float
    speculative_kv_gib: float
    reserve_gib: float

    def describe(self, gpu_gib: float) -> str:
        return (
            f"GPU {gpu_gib:.1f} GiB: baseline {self.baseline_fraction:.2f} "
            f"({self.baseline_fraction * gpu_gib:.1f} GiB, ~{self.baseline_kv_gib:.1f} GiB KV), "
            f"speculative {self.speculative_fraction:.2f} ({self.speculative_fraction * gpu_gib:.1f} GiB, "
            f"~{self.speculative_kv_gib:.1f} GiB KV), {self.reserve_gib:.1f} GiB kept free"
        )


def split_gpu_memory(
    gpu_gib: float,
    target_gib: float,
    draft_gib: float,
    kv_gib: float,
    *,
    runtime_overhead_gib: float = 3.0,
    reserve_fraction: float = 0.04,
    min_draft_ratio: float = MIN_DRAFT_RATIO,
) -> MemorySplit:
    """Split one GPU between a baseline and a speculative vLLM server running the same target.

    gpu_gib: total GPU memory. target_gib / draft_gib: weights (draft 0 = n-gram, no draft model).
    kv_gib: KV cache each server needs at the wanted concurrency (target layers; the draft's own KV
    cache is added in proportion to its size). runtime_overhead_gib: per server (CUDA context,
    activations, CUDA graphs, sampler). reserve_fraction: GPU share neither server may claim.
    Memory left after the needs is shared out as extra KV cache in proportion to each need.
    """
    for name, value in (("gpu_gib", gpu_gib), ("target_gib", target_gib), ("kv_gib", kv_gib)):
        if not value > 0 or not math.isfinite(value):
            raise PairConfigError(f"{name} must be a positive number, got {value!r}")
    if draft_gib < 0 or runtime_overhead_gib < 0 or not 0 <= reserve_fraction < 0.5:
        raise PairConfigError("draft_gib and runtime_overhead_gib must be >= 0, reserve_fraction in [0, 0.5)")
    if draft_gib > 0:
        ratio = target_gib / draft_gib
        if ratio < min_draft_ratio:
            raise PairConfigError(
                f"draft too big: {draft_gib:.2f} GiB is only {ratio:.1f}× smaller than the {target_gib:.2f} GiB "
                f"target; a draft should be {MIN_DRAFT_RATIO:.0f}–{MAX_DRAFT_RATIO:.0f}× smaller or each "
                "step costs more than speculation saves (measured: a 1B draft for an 8B target was slower "
                "than baseline at every load). Pick a smaller draft, use --ngram, or lower --min-draft-ratio."
            )
    draft_kv = kv_gib * (draft_gib / target_gib)
    need_base = target_gib + runtime_overhead_gib + kv_gib
    need_spec = target_gib + draft_gib + runtime_overhead_gib + kv_gib + draft_kv
    reserve = gpu_gib * reserve_fraction
    usable = gpu_gib - reserve
    if need_base + need_spec > usable:
        raise PairConfigError(
            f"not enough GPU memory: baseline needs {need_base:.1f} GiB and speculative {need_spec:.1f} GiB "
            f"(weights, {runtime_overhead_gib:.1f} GiB runtime each, {kv_gib:.1f} GiB KV each) = "
            f"{need_base + need_spec:.1f} GiB > {usable:.1f} GiB usable of {gpu_gib:.1f} GiB. "
            "Lower --kv-tokens / --max-model-len, use a smaller draft or --ngram, or a bigger GPU."
        )
    spare = usable - need_base - need_spec
    kv_total = kv_gib + kv_gib + draft_kv
    extra_base = spare * kv_gib / kv_total
    extra_spec = spare - extra_base
    frac_base = math.floor((need_base + extra_base) / gpu_gib * 100) / 100
    frac_spec = math.floor((need_spec + extra_spec) / gpu_gib * 100) / 100
    base_kv = frac_base * gpu_gib - target_gib - runtime_overhead_gib
    spec_kv = (frac_spec * gpu_gib - target_gib - draft_gib - runtime_overhead_gib) / (1 + draft_gib / target_gib)
    if base_kv < kv_gib * 0.98 or spec_kv < kv_gib * 0.98:
        raise PairConfigError(
            f"not enough GPU memory after rounding the split ({frac_base:.2f} + {frac_spec:.2f}): "
            "lower --kv-tokens or use a bigger GPU"
        )
    return MemorySplit(frac_base, frac_spec, base_kv, spec_kv, gpu_gib - (frac_base + frac_spec) * gpu_gib)
