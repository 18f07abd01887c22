# mypy: allow-untyped-decorators
"""Train a Llama-architecture model from scratch on the corpus for a fixed time; save it for `vllm serve`.

    python deploy/gpu/train/train_lm.py --data DATA --size target|draft|tiny --minutes 7 --device cuda --out DIR

Plain next-token training (AdamW, warm-up then cosine decay over the time budget, bf16 autocast on CUDA) on
random windows of DATA/train.bin; held-out loss and perplexity on fixed windows of DATA/heldout.bin (never
trained on). Writes to --out: the Hugging Face Llama directory (config.json, model.safetensors,
generation_config.json, the tokenizer files of DATA/tokenizer) and train_log.json (loss curve, held-out
perplexity, sizes, timings). Needs torch (and numpy) only.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).parent))
from llama import SHAPES, LlamaForCausalLM, pad_vocab, save_hf

# size -> (batch, seq, peak lr)
# 4096-token windows: the long-context prompts run up to 3800 tokens (+ 256 out) at --max-model-len 4096.
RECIPES = {"target": (8, 4096, 6e-4), "draft": (8, 4096, 1.5e-3), "tiny": (16, 256, 2e-3)}


def load_tokens(path: Path) -> torch.Tensor:
    return torch.from_numpy(np.fromfile(path, dtype=np.uint16).astype(np.int32))


def batch_at(data: torch.Tensor, starts: torch.Tensor, seq: int, device: torch.device) -> tuple[
        torch.Tensor, torch.Tensor]:
    idx = starts[:, None] + torch.arange(seq + 1)[None, :]
    chunk = data[idx].long().to(device, non_blocking=True)
    return chunk[:, :-1], chunk[:, 1:]


def lr_at(frac: float, peak: float, warmup: float = 0.05, floor: float = 0.1) -> float:
    if frac < warmup:
        return peak * max(frac / warmup, 0.01)
    p = min((frac - warmup) / (1 - warmup), 1.0)
    return peak * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * p)))


@torch.no_grad()
def evaluate(model: torch.nn.Module, data: torch.Tensor, seq: int, batch: int, n_batches: int,
             device: torch.device, amp: bool) -> float:
    """Mean next-token loss over fixed, evenly spaced windows of `data`."""
    model.eval()
    n = min(n_batches * batch, max((len(data) - 1) // seq, 1))
    starts = torch.linspace(0, len(data) - seq - 2, n).long()
    total, count = 0.0, 0
    for i in range(0, n, batch):
        x, y = batch_at(data, starts[i:i + batch], seq, device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            logits = model(x)
        total += F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.reshape(-1), reduction="sum").item()
        count += y.numel()
    model.train()
    return total / max(count, 1)


def build(args: argparse.Namespace, vocab: int, device: torch.device) -> tuple[LlamaForCausalLM, Any]:
    torch.manual_seed(args.seed)
    shape = dataclasses.replace(SHAPES[args.size], vocab_size=pad_vocab(vocab))
    model = LlamaForCausalLM(shape).to(device)
    fused = device.type == "cuda"
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.95), weight_decay=0.1, fused=fused)
    return model, opt


def train(args: argparse.Namespace, model: LlamaForCausalLM, opt: Any, data: torch.Tensor, held: torch.Tensor,
          device: torch.device) -> dict[str, Any]:
    amp = device.type == "cuda"
    step_fn = torch.compile(model) if args.compile else model
    gen = torch.Generator().manual_seed(args.seed)
    budget, t0 = args.minutes * 60.0, time.monotonic()
    curve: list[dict[str, float]] = []
    step = tokens = 0
    acc, acc_n, last_log = 0.0, 0, t0
    while (elapsed := time.monotonic() - t0) < budget and (args.max_steps <= 0 or step < args.max_steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(elapsed / budget, args.lr)
        x, y = batch_at(data, torch.randint(0, len(data) - args.seq - 1, (args.batch,), generator=gen), args.seq,
                        device)
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=amp):
            logits = step_fn(x)
        loss = F.cross_entropy(logits.float().view(-1, logits.shape[-1]), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        tokens += x.numel()
        acc, acc_n = acc + loss.item(), acc_n + 1
        now = time.monotonic()
        if now - last_log >= args.log_every_s or step == 1:
            point = {"step": step, "s": round(now - t0, 1), "tokens": tokens, "train_loss": round(acc / acc_n, 4),
                     "lr": round(opt.param_groups[0]["lr"], 6)}
            if args.eval_batches and now - t0 > 0.5 * budget and not any("heldout_loss" in c for c in curve):
                point["heldout_loss"] = round(evaluate(model, held, args.seq, args.batch, 4, device, amp), 4)
            curve.append(point)
            print(json.dumps(point), flush=True)
            acc, acc_n, last_log = 0.0, 0, now
    train_s = time.monotonic() - t0
    return {"steps": step, "tokens": tokens, "train_s": round(train_s, 1),
            "tokens_per_s": round(tokens / max(train_s, 1e-9)), "curve": curve}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, required=True)
    p.add_argument("--size", choices=sorted(SHAPES), required=True)
    p.add_argument("--minutes", type=float, default=5.0)
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--batch", type=int)
    p.add_argument("--seq", type=int)
    p.add_argument("--lr", type=float)
    p.add_argument("--max-steps", type=int, default=0)
    p.add_argument("--log-every-s", type=float, default=15.0)
    p.add_argument("--eval-batches", type=int, default=16, help="held-out windows x batch at the end (0: none)")
    p.add_argument("--compile", action="store_true", help="torch.compile the training forward")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    p.add_argument("--seed", type=int, default=39)
    args = p.parse_args(argv)
    batch, seq, lr = RECIPES[args.size]
    args.batch, args.seq, args.lr = args.batch or batch, args.seq or seq, args.lr or lr
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.device(args.device)
    vocab = json.loads((args.data / "tokenizer" / "tokenizer.json").read_text())
    n_vocab = len(vocab["model"]["vocab"]) + sum(1 for t in vocab["added_tokens"] if t["content"]
                                                  not in vocab["model"]["vocab"])
    data, held = load_tokens(args.data / "train.bin"), load_tokens(args.data / "heldout.bin")
    model, opt = build(args, n_vocab, device)
    gpu = torch.cuda.get_device_name() if device.type == "cuda" else None
    log: dict[str, Any] = {"size": args.size, "shape": dataclasses.asdict(model.shape), "params": model.num_params(),
                           "device": str(device), "gpu": gpu,
                           "torch": torch.__version__, "batch": args.batch, "seq": args.seq, "peak_lr": args.lr,
                           "minutes": args.minutes, "train_tokens_available": len(data),
                           "heldout_tokens_available": len(held), "tokenizer_vocab": n_vocab}
    print(json.dumps({k: v for k, v in log.items() if k != "shape"}), flush=True)
    log.update(train(args, model, opt, data, held, device))
    log["epochs"] = round(log["tokens"] / max(len(data), 1), 2)
    t = time.monotonic()
    amp = device.type == "cuda"
    log["heldout_loss"] = round(evaluate(model, held, args.seq, args.batch, args.eval_batches, device, amp), 4)
    log["heldout_ppl"] = round(math.exp(log["heldout_loss"]), 2)
    log["train_eval_loss"] = round(evaluate(model, data, args.seq, args.batch, args.eval_batches, device, amp), 4)
    log["eval_s"] = round(time.monotonic() - t, 1)
    save_hf(model, args.out)
    for f in (args.data / "tokenizer").iterdir():
        shutil.copy(f, args.out / f.name)
    log["saved_bytes"] = sum(f.stat().st_size for f in args.out.iterdir() if f.is_file())
    (args.out / "train_log.json").write_text(json.dumps(log, indent=1) + "\n")
    print(json.dumps({k: log[k] for k in ("params", "steps", "tokens", "epochs", "train_s", "tokens_per_s",
                                           "heldout_loss", "heldout_ppl", "train_eval_loss", "saved_bytes")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
