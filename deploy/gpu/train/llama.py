# mypy: allow-subclassing-any
"""A Llama decoder in plain torch whose state dict is Hugging Face's `LlamaForCausalLM`, key for key.

Same maths as transformers' Llama and vLLM's (`vllm/model_executor/models/llama.py`): RMSNorm in float32,
rotary embedding on the two halves of each head (rotate_half, vLLM's neox style), grouped-query attention,
SiLU-gated MLP, untied `lm_head`. `save_hf` writes `config.json`, `generation_config.json` and
`model.safetensors` (the `safetensors` package if present, else the format written by hand: an 8-byte header
length, a JSON header, the raw little-endian tensors), so `vllm serve DIR` loads the directory as it is.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class Shape:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    vocab_size: int
    max_position_embeddings: int = 4096
    rope_theta: float = 10000.0
    rms_norm_eps: float = 1e-5

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def hf_config(self, dtype: str = "bfloat16") -> dict[str, Any]:
        return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", **asdict(self),
                "head_dim": self.head_dim, "hidden_act": "silu", "torch_dtype": dtype, "bos_token_id": 0,
                "eos_token_id": 1, "attention_bias": False, "mlp_bias": False, "initializer_range": 0.02,
                "tie_word_embeddings": False, "use_cache": True}


# head_dim 64 everywhere (FlashAttention-3 on Hopper takes 64; the dry run's tiny model uses 32 on CPU).
SHAPES = {
    "target": Shape(1024, 12, 16, 4, 2816, 12032),   # ~160M parameters with a 12k vocabulary
    "draft": Shape(384, 4, 6, 2, 1024, 12032),       # ~16M
    "tiny": Shape(128, 2, 4, 2, 384, 2048),          # ~0.9M, the CPU dry run
}


def pad_vocab(n: int, multiple: int = 64) -> int:
    return (n + multiple - 1) // multiple * multiple


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        dtype = x.dtype
        x32 = x.float()
        x32 = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * x32.to(dtype)


def rotary(seq: int, dim: int, theta: float, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    inv = 1.0 / (theta ** (torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim))
    freqs = torch.outer(torch.arange(seq, device=device, dtype=torch.float32), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.s = s
        d = s.head_dim
        self.q_proj = nn.Linear(s.hidden_size, s.num_attention_heads * d, bias=False)
        self.k_proj = nn.Linear(s.hidden_size, s.num_key_value_heads * d, bias=False)
        self.v_proj = nn.Linear(s.hidden_size, s.num_key_value_heads * d, bias=False)
        self.o_proj = nn.Linear(s.num_attention_heads * d, s.hidden_size, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        s, d = self.s, self.s.head_dim
        q = self.q_proj(x).view(b, t, s.num_attention_heads, d).transpose(1, 2)
        k = self.k_proj(x).view(b, t, s.num_key_value_heads, d).transpose(1, 2)
        v = self.v_proj(x).view(b, t, s.num_key_value_heads, d).transpose(1, 2)
        cos, sin = cos.to(q.dtype), sin.to(q.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        rep = s.num_attention_heads // s.num_key_value_heads
        k = k.repeat_interleave(rep, dim=1)
        v = v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.gate_proj = nn.Linear(s.hidden_size, s.intermediate_size, bias=False)
        self.up_proj = nn.Linear(s.hidden_size, s.intermediate_size, bias=False)
        self.down_proj = nn.Linear(s.intermediate_size, s.hidden_size, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.input_layernorm = RMSNorm(s.hidden_size, s.rms_norm_eps)
        self.self_attn = Attention(s)
        self.post_attention_layernorm = RMSNorm(s.hidden_size, s.rms_norm_eps)
        self.mlp = MLP(s)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.self_attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.embed_tokens = nn.Embedding(s.vocab_size, s.hidden_size)
        self.layers = nn.ModuleList(DecoderLayer(s) for _ in range(s.num_hidden_layers))
        self.norm = RMSNorm(s.hidden_size, s.rms_norm_eps)


class LlamaForCausalLM(nn.Module):
    """`model.embed_tokens`, `model.layers.N.self_attn.q_proj`, ..., `model.norm`, `lm_head`: HF's names."""

    def __init__(self, s: Shape) -> None:
        super().__init__()
        self.shape = s
        self.model = LlamaModel(s)
        self.lm_head = nn.Linear(s.hidden_size, s.vocab_size, bias=False)
        self.apply(self._init)
        for name, p in self.named_parameters():  # GPT-2 style: residual projections scaled down with depth
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * s.num_hidden_layers))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear | nn.Embedding):
            nn.init.normal_(m.weight, std=0.02)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        cos, sin = rotary(ids.shape[1], self.shape.head_dim, self.shape.rope_theta, ids.device)
        x = self.model.embed_tokens(ids)
        for layer in self.model.layers:
            x = layer(x, cos, sin)
        return self.lm_head(self.model.norm(x))

    def num_params(self) -> int:
        return sum(p.numel() for p in self.parameters())


DTYPES = {torch.bfloat16: "BF16", torch.float16: "F16", torch.float32: "F32"}


def write_safetensors(tensors: dict[str, torch.Tensor], path: Path) -> None:
    """The safetensors format by hand: u64 header size, JSON header (dtype, shape, data_offsets), raw bytes."""
    header: dict[str, Any] = {"__metadata__": {"format": "pt"}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().contiguous().cpu()
        raw = t.view(torch.uint8).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with path.open("wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for raw in blobs:
            f.write(raw)


def save_hf(model: LlamaForCausalLM, out: Path, dtype: torch.dtype = torch.bfloat16) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    tensors = {k: v.detach().to(dtype).contiguous().cpu() for k, v in model.state_dict().items()}
    try:
        from safetensors.torch import save_file
        save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    except ImportError:
        write_safetensors(tensors, out / "model.safetensors")
    name = {torch.bfloat16: "bfloat16", torch.float16: "float16", torch.float32: "float32"}[dtype]
    (out / "config.json").write_text(json.dumps(model.shape.hf_config(name), indent=1) + "\n")
    (out / "generation_config.json").write_text(json.dumps({"bos_token_id": 0, "eos_token_id": 1}) + "\n")
    return out / "model.safetensors"


def read_safetensors(path: Path) -> dict[str, torch.Tensor]:
    """Read back what write_safetensors (or the safetensors package) wrote: no dependency but torch."""
    data = path.read_bytes()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    rev = {v: k for k, v in DTYPES.items()}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        buf = bytearray(data[8 + n + a:8 + n + b])
        out[name] = torch.frombuffer(buf, dtype=torch.uint8).view(rev[info["dtype"]]).reshape(info["shape"])
    return out
