"""Requests for trace rows: content from the project's generators, sized to each row's token counts.

A row's class is drawn from the mix (by default the trace's own kind: Azure code -> code and structured
tasks, Azure conv -> chat and creative, BurstGPT by its `Log Type`, Mooncake's conversation trace -> chat).
The task's reference (what the emulated model will write) is cut, or extended with further references of the
same kind, to the row's output tokens (EOS included); `max_tokens` is a client-like round cap above it, not
the exact count. The prompt is sized to the row's prompt tokens, as the emulator counts them: padded with a
context of real text of the task's family (code or prose, from a random place) or cut from its end.

Mooncake rows carry `hash_ids`, one per 512-token block of the prompt: the prompt starts with one text per
block id (the same id, the same text, in every request), so requests that share leading blocks share a prefix
exactly as far as the trace says, and the emulator's prefix cache sees the trace's real reuse.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gateway.emulator.text import tokenize
from gateway.emulator.wire import prompt_of
from gateway.workloads.corpus import CODE_MODULES, Corpus
from gateway.workloads.generate import draw_task, parse_weights
from gateway.workloads.items import WorkloadItem
from gateway.workloads.task import KIND_CLASS
from gateway.workloads.traces import MOONCAKE_BLOCK_TOKENS, TraceRow

CONV_MIX = {"chat": 55, "creative": 30, "extraction": 5, "long_context": 10}
CODE_MIX = {"code_edit": 30, "code_gen": 30, "json_schema": 12, "sql": 12, "json_object": 8, "extraction_json": 8}
DEFAULT_MIX = {"azure-code": CODE_MIX, "azure-conv": CONV_MIX, "mooncake": CONV_MIX}
CAPS = (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
_WORD = re.compile(r"[A-Za-z]{2,12}")


def default_mix(source: str, row: TraceRow) -> dict[str, float]:
    if source == "burstgpt":  # conversations read like chat; API calls like the general mix
        return dict(CONV_MIX) if (row.log_type or "").startswith("Conversation") else parse_weights("mixed")
    return dict(DEFAULT_MIX[source])


def count_tokens(body: Mapping[str, Any]) -> int:
    return len(tokenize(prompt_of(dict(body))))


@dataclass(slots=True)
class Sizing:
    """How far the built requests are from their rows (reported by the CLI, asserted by the tests)."""

    prompt_cut: int = 0  # rows whose task prompt was longer than the row and was cut
    context_clipped: int = 0  # rows whose prompt + output did not fit the context limit
    kinds: dict[str, int] = field(default_factory=dict)


class ContentBuilder:
    def __init__(self, source: str, mix: str | None = None, seed: int = 0, max_context: int = 32768,
                 corpus: Corpus | None = None) -> None:
        self.source = source
        self.mix = parse_weights(mix) if mix else None
        self.rng = random.Random(seed)
        self.max_context = max_context
        self.corpus = corpus or Corpus()
        self.sizing = Sizing()
        self._pools: dict[str, list[str]] = {}

    def _pool(self, family: str) -> list[str]:
        """Tokens of real text to pad prompts with: stdlib sources (code) or the language reference (prose)."""
        if family not in self._pools:
            if family == "code":
                text = "\n".join(self.corpus.module_source(m) or "" for m in CODE_MODULES)
            elif family == "words":
                text = " ".join(_WORD.findall(" ".join(self.corpus.prose_sentences)))
            else:
                text = "\n\n".join(self.corpus.topics.values())
            self._pools[family] = tokenize(text) or tokenize("the quick brown fox jumps over the lazy dog " * 64)
        return self._pools[family]

    def _span(self, family: str, n: int, rng: random.Random) -> str:
        pool = self._pool(family)
        out: list[str] = []
        while len(out) < n:
            at = rng.randrange(max(len(pool) - n, 1))
            out += pool[at : at + n - len(out)]
        return "".join(out)

    def _block_text(self, block_id: int, n: int) -> str:
        """The text of one Mooncake block: `n` tokens (at most 512), the same for the same id everywhere."""
        rng = random.Random(block_id * 1_000_003 + 17)
        pool = self._pool("words")
        at = rng.randrange(max(len(pool) - 2 * MOONCAKE_BLOCK_TOKENS, 1))
        words = [w for w in pool[at : at + 2 * MOONCAKE_BLOCK_TOKENS] if w.strip()][: max(n - 1, 0)]
        return "".join(" " + w.strip() for w in words) + "\n" if n > 0 else ""

    def _reference(self, kind: str, first: str, tokens: int) -> str:
        """`tokens - 1` tokens of the task's kind (the emulator adds EOS): cut, or extended with more tasks."""
        want = max(tokens - 1, 0)
        toks = tokenize(first)
        while len(toks) < want:
            task = draw_task(kind, self.corpus, self.rng)
            toks += tokenize("\n\n" + (task.reference if task is not None else self._span("prose", want, self.rng)))
        return "".join(toks[:want])

    def item(self, row: TraceRow, index: int) -> WorkloadItem:
        weights = self.mix or default_mix(self.source, row)
        kinds = sorted(k for k, w in weights.items() if w > 0)
        task = None
        while task is None:
            if not kinds:
                raise RuntimeError("no task kind in the mix can be generated on this installation")
            kind = self.rng.choices(kinds, weights=[weights[k] for k in kinds])[0]
            task = draw_task(kind, self.corpus, self.rng)
            if task is None:  # this installation lacks the source text for that kind
                kinds = [k for k in kinds if k != kind]
        self.sizing.kinds[kind] = self.sizing.kinds.get(kind, 0) + 1
        output = min(row.output_tokens, self.max_context // 2)
        prompt = row.prompt_tokens
        if prompt + output + 1 > self.max_context:
            self.sizing.context_clipped += 1
            prompt = self.max_context - output - 1
        reference = self._reference(kind, task.reference, output)
        body: dict[str, Any] = {k: v for k, v in task.body.items() if k != "stop"}
        body["max_tokens"] = min(next((c for c in CAPS if c >= output), output), self.max_context - prompt)
        if row.hash_ids:
            body = self._with_blocks(body, row.hash_ids, prompt)
        self._fit(body, prompt, "code" if KIND_CLASS[kind] in ("code", "structured") else "prose")
        extra = {"trace": {"source": self.source, "row": row.row, "prompt_tokens": row.prompt_tokens,
                           "output_tokens": row.output_tokens, "blocks": len(row.hash_ids)}}
        return WorkloadItem(id=f"{self.source}-{row.row:07d}", t=row.t, endpoint=task.endpoint, body=body,
                            reference=reference, kind=kind, extra=extra)

    def _with_blocks(self, body: dict[str, Any], hash_ids: tuple[int, ...], prompt: int) -> dict[str, Any]:
        """The blocks' text first (as a system message, or before a completion prompt), the task after it."""
        task_budget = min(count_tokens(body), max(prompt // 4, 1))
        budget = max(prompt - task_budget, 0)
        parts: list[str] = []
        for block_id in hash_ids:
            n = min(MOONCAKE_BLOCK_TOKENS, budget)
            if n <= 0:
                break
            parts.append(self._block_text(block_id, n))
            budget -= n
        context = "".join(parts)
        out = dict(body)
        if "messages" in out:
            out["messages"] = [{"role": "system", "content": context}, *out["messages"]]
        else:
            out["prompt"] = context + str(out.get("prompt", ""))
        return out

    def _fit(self, body: dict[str, Any], target: int, family: str) -> None:
        """Pad (a context of real text before the task) or cut (from the end) the last prompt part to
        `target` tokens, in place; drops leading messages only when the last one alone cannot be cut enough."""
        cut = count_tokens(body) > target
        for _ in range(4):
            have = count_tokens(body)
            if have == target:
                break
            msgs = body.get("messages")
            text = str(msgs[-1].get("content") or "") if msgs else str(body.get("prompt", ""))
            if have < target:
                text = f"Context:\n{self._span(family, target - have, self.rng)}\n\n" + text
            else:
                toks = tokenize(text)
                if len(toks) <= have - target and msgs and len(msgs) > 1:
                    body["messages"] = msgs = msgs[1:]
                    continue
                text = "".join(toks[: max(len(toks) - (have - target), 1)])
            if msgs:
                msgs[-1] = {**msgs[-1], "content": text}
            else:
                body["prompt"] = text
        self.sizing.prompt_cut += cut


def build_items(source: str, rows: list[TraceRow], mix: str | None = None, seed: int = 0,
                max_context: int = 32768) -> tuple[list[WorkloadItem], Sizing]:
    builder = ContentBuilder(source, mix, seed, max_context)
    return [builder.item(row, i) for i, row in enumerate(rows)], builder.sizing
