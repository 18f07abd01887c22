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
start-up, so the two must not profile at the same time), wait for /health, warm both up with sampled and greedy
bursts (`warm_vllm.py`: vLLM compiles its sampling kernels on first use, a stall of seconds under traffic;
`--no-warm-up` skips it), print the `specgate serve` environment, then keep both running until Ctrl-C (or exit at
once with --detach).

Draft choice rules (see deploy/README.md): the draft must share the target's tokenizer and vocabulary
(vLLM verifies token ids, not text) and be 10–50× smaller: a bigger draft costs more per step than it
saves (on an H200 with vLLM 0.26 a 1B draft for an 8B target was 1.0–1.6× slower than no speculation
at every load), a much smaller one guesses too badly. With no suitable draft, use n-gram lookup.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml
from pair_commands import PairConfig, build_commands, gateway_env, local_url
from pair_sizing import (
    GIB,
    MIN_DRAFT_RATIO,
    MemorySplit,
    ModelSize,
    PairConfigError,
    check_draft_compatible,
    model_size_from_config,
    read_model_config,
    split_gpu_memory,
)
from warm_vllm import plan as warm_plan
from warm_vllm import served_model, warm


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


def warm_up(urls: list[str]) -> bool:
    """Both servers' sampling kernels compiled before traffic (`warm_vllm.py`); False if a request failed."""
    failed = 0
    for url in urls:
        t0 = time.monotonic()
        try:
            model = served_model(url)
        except (urllib.error.URLError, OSError, ValueError, KeyError, IndexError) as exc:
            print(f"{url}: cannot read /v1/models ({exc})", file=sys.stderr)
            return False
        ok, bad = warm(url, warm_plan(model))
        failed += bad
        print(f"{url} warmed up: {ok} requests in {time.monotonic() - t0:.1f} s, {bad} failed", flush=True)
    return failed == 0


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
    p.add_argument("--no-warm-up", dest="warm_up", action="store_false",
                   help="skip the sampled warm-up bursts (warm_vllm.py) once both servers are healthy")
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
    if args.warm_up and not warm_up([local_url(cfg, cfg.baseline_port), local_url(cfg, cfg.speculative_port)]):
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
