"""Pure step-time model: bytes over bandwidth, FLOPs over compute, host time per engine step.

A forward pass over a batch reads every weight once and the KV cache of every scheduled sequence, and
does 2 FLOPs per parameter per token plus attention:

    gpu_time = max(weight_bytes / bandwidth, flops / compute) + kv_bytes / bandwidth

An engine step is a list of phases; in a phase the host work (scheduling, Python, kernel launches) and
the GPU work run concurrently, so the phase lasts max(host, GPU wait + GPU). The baseline step is one
phase; the n-gram step is one (wider) verification phase; the draft-model step adds γ draft passes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .profiles import GpuSpec, ModelSpec, Profile


@dataclass(frozen=True, slots=True)
class SeqWork:
    """One sequence in a forward pass: new (query) tokens and the context they attend to."""

    query_tokens: int
    context_tokens: int


@dataclass(frozen=True, slots=True)
class Phase:
    host_s: float
    gpu_s: float


def forward_time(model: ModelSpec, gpu: GpuSpec, batch: Sequence[SeqWork]) -> float:
    """GPU seconds of one forward pass of `model` over `batch` (0 for an empty batch)."""
    if not batch:
        return 0.0
    tokens = sum(w.query_tokens for w in batch)
    flops = model.flops_per_token * tokens + sum(model.attention_flops(w.query_tokens, w.context_tokens) for w in batch)
    kv_bytes = model.kv_bytes_per_token * sum(w.context_tokens for w in batch)
    return max(model.weight_bytes / gpu.bandwidth, flops / gpu.compute) + kv_bytes / gpu.bandwidth


def pad_to_gamma(verify: Sequence[SeqWork], gamma: int) -> list[SeqWork]:
    """vLLM 0.26 with a fixed γ pads a decode step (no prefill in it) to 1 + γ tokens per sequence, drafts or not,
    to replay one full CUDA graph (scheduler.py, `pad_spec_decode`): a sequence the n-gram lookup found nothing
    for (every sampled request on random weights) still costs a (1 + γ)-token verification. Dynamic γ
    (`num_speculative_tokens_per_batch_size`) turns the padding off."""
    return [SeqWork(1 + gamma, w.context_tokens) if w.query_tokens == 1 else w for w in verify]


def baseline_phases(profile: Profile, batch: Sequence[SeqWork]) -> list[Phase]:
    return [Phase(0.0, forward_time(profile.target, profile.gpu, batch))]


def speculative_phases(
    profile: Profile, verify: Sequence[SeqWork], draft_passes: Sequence[Sequence[SeqWork]]
) -> list[Phase]:
    """Verification of the drafts (a target pass over 1 + drafts tokens per decoding sequence) and, for a
    draft model, its γ passes proposing the next drafts. The draft passes' host time (Python and kernel
    launches, `draft_pass_host_s` each) overlaps the GPU queue, so the step is one phase: host = γ x
    draft_pass_host_s, GPU = verify + each pass's max(FLOP/byte time, draft_pass_gpu_hold x its host time).
    n-gram drafting runs on the host inside the step overhead."""
    gpu = forward_time(profile.target, profile.gpu, verify)
    host = 0.0
    if profile.method == "draft_model" and profile.draft is not None:
        for batch in draft_passes:
            if batch:
                host += profile.draft_pass_host_s
                gpu += max(forward_time(profile.draft, profile.gpu, batch),
                           profile.draft_pass_gpu_hold * profile.draft_pass_host_s)
    return [Phase(host, gpu)]
