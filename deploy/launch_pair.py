#!/usr/bin/env python3
"""Launch a baseline + speculative vLLM pair on one GPU for specgate (stdlib + pyyaml only).

Both servers serve the SAME target model; the speculative one adds `--speculative-config` with a
draft model (same tokenizer, 10–50× smaller) or n-gram prompt lookup. The `--gpu-memory-utilization`
of each is computed from the model sizes so that both fit, and the spare memory becomes KV cache.

    python deploy/launch_pair.py --target /models/llama-8b --ngram --dry-run
    python deploy/launch_pair.py --target /models/llama-8b --draft /models/llama-0.5b --gpu-gib 80
    python deploy/launch_pair.py --config pair.yaml -- --load-format dummy   # args after -- go to both

Steps: compute the split (pure `split_gpu_memory`), build both command lines (pure `build_commands`),
start the baseline, wait for its /health, start the speculative server (vLLM measures free memory at
start-up, so the two must not profile at the same time), wait for /health, print the `specgate serve`
environment, then keep both running until Ctrl-C (or exit at once with --detach).

Draft choice rules (see deploy/README.md): the draft must share the target's tokenizer and vocabulary
(vLLM verifies token ids, not text) and be 10–50× smaller: a bigger draft costs more per step than it
saves (on an H200 with vLLM 0.26 a 1B draft for an 8B target was 1.0–1.6× slower than no speculation
at every load), a much smaller one guesses too badly. With no suitable draft, use n-gram lookup.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import math
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

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


# ------------------------------------------------------------------------------------- command lines
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


# ------------------------------------------------------------------------------------------- running
def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout_s: float, log: Path) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: vllm exited with {proc.returncode}; see {log}")
        with contextlib.suppress(urllib.error.URLError, OSError), \
                urllib.request.urlopen(url + "/health", timeout=2) as resp:
            if resp.status == 200:
                return
        time.sleep(1.0)
    raise RuntimeError(f"{url} not healthy after {timeout_s:.0f} s; see {log}")


def start(argv: list[str], log: Path, detach: bool) -> subprocess.Popen[bytes]:
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=detach)


def gpu_total_gib() -> float:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        return int(out.split()[0]) / 1024  # MiB
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        raise PairConfigError("cannot read GPU memory with nvidia-smi: pass --gpu-gib") from None


def _weights_gib(model: str, given: float | None, what: str) -> tuple[float, ModelSize | None]:
    cfg = read_model_config(model)
    size = model_size_from_config(cfg) if cfg is not None else None
    if given is not None:
        return given, size
    if size is None:
        raise PairConfigError(f"cannot size {what} {model!r} (no local config.json): pass --{what}-gib")
    return size.weights_gib, size


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    argv = list(argv)
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--config", type=Path, help="YAML file whose keys are these options (dashes or underscores)")
    p.add_argument("--target", help="target model: HF name or local directory (same on both servers)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--draft", help="draft model (same tokenizer, 10–50× smaller)")
    g.add_argument("--ngram", action="store_true", help="n-gram prompt lookup instead of a draft model")
    p.add_argument("--served-model-name")
    p.add_argument("--num-speculative-tokens", type=int, default=4, help="γ (default 4)")
    p.add_argument("--prompt-lookup-max", type=int, default=4)
    p.add_argument("--prompt-lookup-min", type=int, default=2)
    p.add_argument("--synthetic-acceptance-length", type=float,
                   help="benchmarks with dummy weights: vLLM's synthetic rejection sampler at this mean length")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--baseline-port", type=int, default=8001)
    p.add_argument("--speculative-port", type=int, default=8002)
    p.add_argument("--max-model-len", type=int)
    p.add_argument("--gpu-gib", type=float, help="GPU memory (default: nvidia-smi)")
    p.add_argument("--target-gib", type=float, help="target weights (default: from config.json)")
    p.add_argument("--draft-gib", type=float, help="draft weights (default: from config.json)")
    p.add_argument("--kv-gib", type=float, help="KV cache each server needs (default: from --kv-tokens)")
    p.add_argument("--kv-tokens", type=int, default=131072,
                   help="tokens of KV cache each server must hold (default 131072 = 64 × 2048)")
    p.add_argument("--runtime-overhead-gib", type=float, default=3.0)
    p.add_argument("--reserve-fraction", type=float, default=0.04)
    p.add_argument("--min-draft-ratio", type=float, default=MIN_DRAFT_RATIO)
    p.add_argument("--vllm", default="vllm", help="vLLM launcher command (e.g. 'python -m vllm.entrypoints.cli.main')")
    p.add_argument("--log-dir", type=Path, default=Path("logs"))
    p.add_argument("--health-timeout-s", type=float, default=900.0)
    p.add_argument("--detach", action="store_true", help="leave both servers running and exit")
    p.add_argument("--dry-run", action="store_true", help="print the split and the commands, start nothing")
    first, _ = p.parse_known_args(argv)
    if first.config is not None:
        loaded = yaml.safe_load(first.config.read_text()) or {}
        if not isinstance(loaded, dict):
            p.error(f"{first.config}: expected a mapping")
        known = {a.dest for a in p._actions}
        defaults = {str(k).replace("-", "_"): v for k, v in loaded.items()}
        unknown = sorted(set(defaults) - known)
        if unknown:
            p.error(f"{first.config}: unknown keys {unknown}")
        extra = [str(x) for x in defaults.pop("extra_args", None) or []] + extra
        p.set_defaults(**defaults)
    args = p.parse_args(argv)
    args.extra_args = extra
    if not args.target:
        p.error("--target is required (or `target:` in --config)")
    if not args.draft and not args.ngram:
        p.error("choose --draft MODEL or --ngram")
    return args


def plan(args: argparse.Namespace) -> tuple[PairConfig, MemorySplit, float]:
    target_gib, target_size = _weights_gib(args.target, args.target_gib, "target")
    draft_gib = 0.0
    if args.draft:
        check_draft_compatible(args.target, args.draft)
        draft_gib, _ = _weights_gib(args.draft, args.draft_gib, "draft")
    kv_gib = args.kv_gib
    if kv_gib is None:
        if target_size is None:
            raise PairConfigError("cannot size the KV cache without the target's config.json: pass --kv-gib")
        kv_gib = args.kv_tokens * target_size.kv_bytes_per_token / GIB
    gpu_gib = args.gpu_gib if args.gpu_gib is not None else gpu_total_gib()
    split = split_gpu_memory(gpu_gib, target_gib, draft_gib, kv_gib, runtime_overhead_gib=args.runtime_overhead_gib,
                             reserve_fraction=args.reserve_fraction, min_draft_ratio=args.min_draft_ratio)
    extra_spec: dict[str, Any] = {}
    if args.synthetic_acceptance_length is not None:
        extra_spec = {"rejection_sample_method": "synthetic",
                      "synthetic_acceptance_length": args.synthetic_acceptance_length}
    cfg = PairConfig(
        target=args.target, draft=args.draft or None, served_model_name=args.served_model_name,
        num_speculative_tokens=args.num_speculative_tokens, prompt_lookup_max=args.prompt_lookup_max,
        prompt_lookup_min=args.prompt_lookup_min, host=args.host, baseline_port=args.baseline_port,
        speculative_port=args.speculative_port, max_model_len=args.max_model_len,
        speculative_extra=extra_spec, extra_args=tuple(args.extra_args), vllm=tuple(shlex.split(args.vllm)),
    )
    return cfg, split, gpu_gib


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        cfg, split, gpu_gib = plan(args)
        baseline, speculative = build_commands(cfg, split)
    except PairConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    env_lines = "\n".join(f"export {k}={shlex.quote(v)}" for k, v in gateway_env(cfg).items())
    print(f"# {split.describe(gpu_gib)}")
    print("# baseline:\n" + shlex.join(baseline))
    print("# speculative:\n" + shlex.join(speculative))
    if args.dry_run:
        print(f"# then, for the gateway:\n{env_lines}\nspecgate serve")
        return 0
    procs: list[subprocess.Popen[bytes]] = []
    try:
        for name, argv_, port in (("baseline", baseline, cfg.baseline_port),
                                  ("speculative", speculative, cfg.speculative_port)):
            log = args.log_dir / f"vllm-{name}.log"
            proc = start(argv_, log, args.detach)
            procs.append(proc)
            print(f"started {name} (pid {proc.pid}, log {log}); waiting for /health ...", flush=True)
            wait_healthy(local_url(cfg, port), proc, args.health_timeout_s, log)
            print(f"{name} healthy", flush=True)
    except (RuntimeError, KeyboardInterrupt) as exc:
        print(f"error: {exc}", file=sys.stderr)
        for proc in procs:
            proc.terminate()
        return 1
    print(f"\n# both servers are up. Start the gateway with:\n{env_lines}\nspecgate serve", flush=True)
    if args.detach:
        print(f"# pids: {' '.join(str(p.pid) for p in procs)} (stop with kill)")
        return 0
    try:
        while all(p.poll() is None for p in procs):
            time.sleep(2.0)
        print("a vLLM server exited; stopping the other", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    raise SystemExit(main())
