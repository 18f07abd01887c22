"""Hardware and model profiles: every constant of the emulator's timing, documented.

A profile names a GPU, a target model, a drafter and the engine's fixed costs. Step times are built
from these in `costs.py`. Model shapes and GPU peaks come from configs and datasheets; the rest was
fitted by hand to vLLM 0.26.0 on one H200 (/work/shared/CALIBRATION.md), one group of rows at a time,
with `specgate calibrate` printing emulated vs measured:

- `mem_efficiency` 0.70 and `step_overhead_s` 0.3 ms: baseline TPOT at c = 1 and 4 (4.5-4.8 ms).
- `compute_efficiency` 0.62: the compute-bound rows (baseline and n-gram at c = 64).
- `spec_step_overhead_s` 2.2 ms: n-gram at c = 1 (6.6 ms per step at both 3.3 and 1.4 tokens/step).
- `spec_token_host_s` 0.03 ms (n-gram), 0.015 ms (draft model): the growth of n-gram TPOT with c at
  3.3 vs 1.4 tokens/step, and the draft model at c = 64.
- `draft_pass_host_s` 4.8 ms: the 1B draft model at c = 1-16 (~22 ms per step whatever the batch).
- `draft_pass_gpu_hold` 0.22: baseline slowed x1.7-1.8 next to the draft-model server at c = 1-4 while
  the draft-model server itself is barely slowed (measured x1.0).
- `gpu_switch_loss` 0.25: the together rows at c = 16 and 64.
The B200 profiles reuse the fitted efficiencies and host costs (not measured).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

SpecMethod = Literal["draft_model", "ngram"]


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A decoder-only transformer's shape (Llama family), enough for bytes and FLOPs per step."""

    name: str
    params: float  # parameter count, incl. embeddings and LM head
    layers: int
    hidden: int  # model width (= attention heads x head dim for Llama)
    kv_heads: int
    head_dim: int
    bytes_per_param: float = 2.0  # bf16

    @property
    def weight_bytes(self) -> float:
        """Bytes read from HBM by one forward pass (every weight once, whatever the batch)."""
        return self.params * self.bytes_per_param

    @property
    def kv_bytes_per_token(self) -> float:
        """K and V of one token in every layer (bf16)."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * 2.0

    @property
    def flops_per_token(self) -> float:
        """Dense FLOPs per token through the weights (2 per parameter: multiply and add)."""
        return 2.0 * self.params

    def attention_flops(self, query_tokens: int, context: int) -> float:
        """QK^T and PV for `query_tokens` new tokens attending to `context` tokens."""
        return 4.0 * self.layers * self.hidden * query_tokens * context


# Llama-3.1-8B's shape with the 32000-token vocabulary of the calibration configs
# (/work/shared/gpu/models/target): 32 x (41.9M attention + 176.2M MLP) + 2 x 131M embeddings = 7.24e9.
LLAMA_8B = ModelSpec("llama-8b", params=7.24e9, layers=32, hidden=4096, kv_heads=8, head_dim=128)
# Llama-3.1-8B with its real 128256-token vocabulary (~16 GB bf16), the seed's Blackwell case.
LLAMA_8B_FULL_VOCAB = ModelSpec("llama-3.1-8b", params=8.03e9, layers=32, hidden=4096, kv_heads=8, head_dim=128)
# Llama-3.2-1B's shape, 32000 vocabulary, tied embeddings: 16 x 60.8M + 65.5M = 1.04e9 (~2.1 GB).
LLAMA_1B = ModelSpec("llama-1b", params=1.04e9, layers=16, hidden=2048, kv_heads=8, head_dim=64)
# The Llama-shape target trained on the H200 on 2026-12-05 (deploy/gpu/train: 1024 wide, 12 layers, 16 / 4 heads,
# 12032-token vocabulary; deploy/gpu/results/2026-12-05-trained).
TRAINED_160M = ModelSpec("trained-160m", params=1.599e8, layers=12, hidden=1024, kv_heads=4, head_dim=64)
# Llama-3.2-1B with its real vocabulary (1.24e9 params, ~2.5 GB bf16).
LLAMA_1B_FULL_VOCAB = ModelSpec("llama-3.2-1b", params=1.24e9, layers=16, hidden=2048, kv_heads=8, head_dim=64)


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """A GPU's peak numbers and the fractions a serving engine reaches (fitted on the H200)."""

    name: str
    hbm_bytes_per_s: float  # peak HBM bandwidth
    bf16_flops_per_s: float  # dense bf16 tensor-core peak
    mem_efficiency: float  # achieved fraction of peak bandwidth in a decode step (weights + KV)
    compute_efficiency: float  # achieved fraction of dense peak in large GEMMs (prefill, wide verify)

    @property
    def bandwidth(self) -> float:
        return self.hbm_bytes_per_s * self.mem_efficiency

    @property
    def compute(self) -> float:
        return self.bf16_flops_per_s * self.compute_efficiency


# H200 SXM: 141 GB HBM3e at 4.8 TB/s; 989 TFLOP/s dense bf16 (1979 with sparsity), NVIDIA datasheet.
# Fitted: a batch-1 decode of the 14.5 GB target took 4.5-4.7 ms/token in vLLM 0.26 (incl. ~0.3 ms of
# step overhead), i.e. ~70% of peak bandwidth; the compute-bound c=64 n-gram rows (5 verified tokens
# per sequence) give ~62% of dense peak.
H200 = GpuSpec("H200", hbm_bytes_per_s=4.8e12, bf16_flops_per_s=989e12, mem_efficiency=0.70, compute_efficiency=0.62)
# B200: 8 TB/s HBM3e, ~2.25 PFLOP/s dense bf16 (NVIDIA DGX B200 datasheet: 72 PFLOPS fp8 sparse per 8 GPUs
# -> 2.25 PFLOP/s dense bf16 per GPU). Not measured here: the H200's fitted efficiencies are reused.
B200 = GpuSpec("B200", hbm_bytes_per_s=8.0e12, bf16_flops_per_s=2.25e15, mem_efficiency=0.70, compute_efficiency=0.62)


@dataclass(frozen=True, slots=True)
class Profile:
    """One deployment: a GPU shared by a baseline server and a speculative server of the same target.

    Engine costs not explained by bytes and FLOPs (all fitted on vLLM 0.26.0 / H200):
    - `step_overhead_s`: serial host time per engine step of the baseline (scheduling, sampling, output
      processing not hidden by async scheduling).
    - `spec_step_overhead_s`: the same on the speculative server, where vLLM 0.26 runs the proposer,
      the rejection sampler and bookkeeping per step (n-gram at c=1 took ~6.6 ms per step against the
      baseline's 4.6 ms for the same memory-bound target pass).
    - `draft_pass_host_s`: host time of one draft-model forward pass. vLLM 0.26 ran `draft_model` on its
      older model runner with async scheduling disabled, so each of the γ draft passes pays Python and
      kernel-launch time on the CPU; the GPU work overlaps it (a phase lasts max(host, GPU)). This is
      why the 1B-draft server was slower than baseline at every concurrency.
    - `spec_token_host_s`: serial host time per token the speculative server emits in a step (rejection
      sampling, detokenisation and output processing without async scheduling).
    - `draft_pass_gpu_hold`: an eager draft pass launches its many small kernels one by one; while it does,
      its process holds a share of the time-sliced GPU. The pass counts as max(its FLOP/byte time,
      hold x its host time) of GPU work, which is what slows a co-located baseline (x1.7-1.9 measured).
    - `gpu_switch_loss`: fraction of GPU throughput lost to context switches while both servers have work
      (two processes without MPS time-slice the GPU).
    """

    name: str
    gpu: GpuSpec
    target: ModelSpec
    method: SpecMethod
    draft: ModelSpec | None = None
    gamma: int = 4  # num_speculative_tokens
    ngram_min: int = 2  # prompt_lookup_min, as every deploy of this repo serves it (deploy/.env, deploy/gpu)
    ngram_max: int = 4  # prompt_lookup_max
    step_overhead_s: float = 0.30e-3
    spec_step_overhead_s: float = 2.2e-3
    draft_pass_host_s: float = 0.0
    spec_token_host_s: float = 0.03e-3
    draft_pass_gpu_hold: float = 0.22
    gpu_switch_loss: float = 0.25
    max_num_batched_tokens: int = 8192
    max_num_seqs: int = 256
    block_size: int = 16
    # KV-cache blocks at --gpu-memory-utilization 0.45 (vllm:cache_config_info in the fixtures):
    baseline_kv_blocks: int = 24709
    speculative_kv_blocks: int = 24709
    max_model_len: int = 32768
    # vLLM's dynamic speculative decoding (`num_speculative_tokens_per_batch_size`): (first, last, γ) batch-size
    # ranges, inclusive, sorted, starting at 1; a batch size past the last range keeps the last γ. None: γ always.
    spec_schedule: tuple[tuple[int, int, int], ...] | None = None
    notes: str = field(default="", compare=False)

    def with_overrides(self, **changes: object) -> Profile:
        return replace(self, **changes)  # type: ignore[arg-type]

    def gamma_at(self, batch_size: int) -> int:
        """Draft tokens per sequence in a step of `batch_size` running requests (vLLM's dense schedule lookup)."""
        if self.spec_schedule is None:
            return self.gamma
        k = self.gamma
        for first, last, gamma in self.spec_schedule:
            if batch_size < first:
                break
            k = gamma
            if batch_size <= last:
                break
        return min(k, self.gamma)


DEFAULT_PROFILE = "h200-ngram"
# The dynamic-K schedule of deploy/gpu/start_single.sh: γ = 4 up to 4 running requests, 2 up to 16, none above.
DYNK_SCHEDULE: tuple[tuple[int, int, int], ...] = ((1, 4, 4), (5, 16, 2), (17, 256, 0))

PROFILES: dict[str, Profile] = {
    "h200-draft": Profile(
        "h200-draft", H200, LLAMA_8B, "draft_model", draft=LLAMA_1B, gamma=4,
        spec_step_overhead_s=2.2e-3, draft_pass_host_s=4.8e-3, spec_token_host_s=0.015e-3, speculative_kv_blocks=18760,
        notes="8B target + 1B draft model (γ=4) on one H200, vLLM 0.26 (calibrated: speculation never pays)",
    ),
    "h200-ngram": Profile(
        "h200-ngram", H200, LLAMA_8B, "ngram", gamma=4,
        notes="8B target + n-gram prompt lookup (γ=4) on one H200, vLLM 0.26 (calibrated)",
    ),
    "h200-ngram-dynk": Profile(
        "h200-ngram-dynk", H200, LLAMA_8B, "ngram", gamma=4, spec_schedule=DYNK_SCHEDULE,
        notes="h200-ngram whose speculative server speculates by batch size (vLLM num_speculative_tokens_per_batch_"
              "size [[1,4,4],[5,16,2],[17,256,0]])",
    ),
    # Fitted to the trained pair on the H200 (deploy/gpu/results/2026-12-05-trained, vLLM 0.26, 0.25 of the GPU
    # each): a 0.3 GB target reads its weights in ~0.1 ms, so a step is host time: baseline TPOT 2.08 ms at low
    # load (mixed-low, Poisson 1.5/s), the n-gram server 4.05 ms at 1.36 tokens a step (~5.5 ms a step; its host
    # time replaces the baseline's 1.9 ms).
    "h200-trained-ngram": Profile(
        "h200-trained-ngram", H200, TRAINED_160M, "ngram", gamma=4, step_overhead_s=1.9e-3,
        spec_step_overhead_s=5.3e-3, max_model_len=4096,
        notes="the 160M target trained on the H200 + n-gram prompt lookup (γ=4), vLLM 0.26: every step is host time",
    ),
    "b200-draft": Profile(
        "b200-draft", B200, LLAMA_8B_FULL_VOCAB, "draft_model", draft=LLAMA_1B_FULL_VOCAB, gamma=4,
        spec_step_overhead_s=2.2e-3, draft_pass_host_s=4.8e-3, spec_token_host_s=0.015e-3, baseline_kv_blocks=60000,
        speculative_kv_blocks=50000,
        notes="Llama-3.1-8B (~16 GB) + Llama-3.2-1B (~2.5 GB) on one B200; host costs as measured on H200",
    ),
    "b200-ngram": Profile(
        "b200-ngram", B200, LLAMA_8B_FULL_VOCAB, "ngram", gamma=4, baseline_kv_blocks=60000,
        speculative_kv_blocks=60000,
        notes="Llama-3.1-8B + n-gram prompt lookup on one B200; host costs as measured on H200",
    ),
}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; known: {', '.join(sorted(PROFILES))}") from None
