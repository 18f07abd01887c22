"""The clairvoyant policy's oracle file: each request's true tokens per step and output length, computed
offline with the emulator's own drafter from the workload's reference (the gateway never sees references)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gateway.workloads.items import WorkloadItem


def prompt_text(body: dict[str, Any]) -> str:
    """The prompt exactly as the emulated server sees it."""
    from gateway.emulator.wire import prompt_of

    return prompt_of(body)


def oracle_entries(items: Sequence[WorkloadItem], profile: str) -> dict[str, dict[str, float | int]]:
    from gateway.emulator.drafter import offline_tokens_per_step
    from gateway.emulator.text import tokenize

    out: dict[str, dict[str, float | int]] = {}
    # the emulated server's draft model learns from the workload's other references: so does the oracle
    references = {item.id: item.reference for item in items if item.reference is not None}
    for item in items:
        if item.reference is None:
            continue
        temperature = float(item.body.get("temperature", 1.0))
        prompt = prompt_text(item.body)
        tps = offline_tokens_per_step(profile, prompt, item.reference, temperature, references)
        tokens = len(tokenize(item.reference)) + 1  # + EOS
        max_tokens = item.body.get("max_tokens") or item.body.get("max_completion_tokens")
        if max_tokens:
            tokens = min(tokens, int(max_tokens))
        out[item.id] = {"tokens_per_step": round(tps, 4), "output_tokens": tokens}
    return out


def write_oracle(items: Sequence[WorkloadItem], profile: str, path: Path) -> Path:
    path.write_text(json.dumps(oracle_entries(items, profile)))
    return path
