"""The requests of a real-GPU run: workloads adapted to the served model, a nonce per run, Poisson arrivals."""

from __future__ import annotations

import argparse
import dataclasses
import random
from pathlib import Path
from typing import Any

from bench_summary import log

from gateway.workloads import WorkloadItem


def prompt_text(body: dict[str, Any]) -> str:
    if "messages" in body:
        return "".join(str(m.get("content") or "") for m in body["messages"])
    return str(body.get("prompt") or "")


def make_counter(tokenizer_path: str | None) -> Any:
    """Token counter for the served model (tokenizers, present on the GPU image), else chars/2 (pessimistic)."""
    if tokenizer_path and Path(tokenizer_path).is_file():
        try:
            from tokenizers import Tokenizer  # type: ignore[import-not-found]

            tk = Tokenizer.from_file(tokenizer_path)
            return lambda text: len(tk.encode(text).ids), "tokenizers"
        except Exception as exc:  # the filter falls back to a character bound
            log(f"tokenizer unavailable ({exc}); filtering by characters")
    return (lambda text: len(text) // 2), "chars/2"


def adapt(items: list[WorkloadItem], args: argparse.Namespace, counter: Any) -> tuple[list[WorkloadItem], int]:
    """Cap max_tokens, ignore EOS (dummy weights), drop structured-output fields unless kept, drop too-long prompts."""
    out, dropped = [], 0
    for item in items:
        body = dict(item.body)
        body["max_tokens"] = min(int(body.get("max_tokens") or args.max_tokens), args.max_tokens)
        body["ignore_eos"] = True
        if not args.keep_structured:
            for key in ("response_format", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
                        "structured_outputs", "tools", "tool_choice"):
                body.pop(key, None)
        if counter(prompt_text(body)) + body["max_tokens"] + 64 > args.max_model_len:
            dropped += 1
            continue
        out.append(dataclasses.replace(item, body=body))
    return out, dropped


def with_nonce(items: list[WorkloadItem], nonce: str) -> list[WorkloadItem]:
    """A distinct prompt prefix per run, so vLLM's prefix cache never serves one policy's prompts to another."""
    out = []
    for item in items:
        body = dict(item.body)
        if "messages" in body:
            msgs = [dict(m) for m in body["messages"]]
            msgs[0]["content"] = f"[{nonce}] " + str(msgs[0].get("content") or "")
            body["messages"] = msgs
        else:
            body["prompt"] = f"[{nonce}] " + str(body.get("prompt") or "")
        out.append(dataclasses.replace(item, id=f"{nonce}-{item.id}", body=body))
    return out


def poisson_schedule(items: list[WorkloadItem], rate: float, duration: float, seed: int) -> list[WorkloadItem]:
    """Poisson arrivals at `rate` for `duration` seconds; a rate of 0 keeps the workload's own arrivals (a trace)."""
    if rate <= 0:
        return [item for item in items if item.t <= duration]
    rng = random.Random(seed)
    t, out = 0.0, []
    for item in items:
        t += rng.expovariate(rate)
        if t > duration:
            break
        out.append(dataclasses.replace(item, t=t))
    return out
