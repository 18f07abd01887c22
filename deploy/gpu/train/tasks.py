"""The task classes of issue 39 and their prompts, built from held-out documents only.

Each class takes the held-out task documents of its workload kinds (`build_corpus.py`); a class whose kinds
have none falls back to held-out plain documents (the first part as the prompt, the rest as the reference).
Every prompt is sent twice: greedy (T = 0) and sampled (T drawn from [0.8, 1.2] per prompt, seeded).
Stdlib only; `count_tokens` defaults to a rough words-and-punctuation count (train_tokenizer.py passes the
trained tokenizer's).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

# class -> the workload kinds (gateway.workloads.task.KINDS) whose held-out documents feed it
CLASSES: dict[str, tuple[str, ...]] = {
    "json_extraction": ("extraction_json", "json_object"),
    "sql": ("sql",),
    "code_edit": ("code_edit",),
    "code_gen": ("code_gen",),
    "creative": ("creative",),
    "chat": ("chat",),
    "long_context_qa": ("long_context",),
}
MODES = ("greedy", "sampled")
SAMPLED_T = (0.8, 1.2)
_TOKEN = re.compile(r"\w+|[^\w\s]")


def approx_tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


@dataclass(frozen=True, slots=True)
class Prompt:
    id: str
    cls: str
    mode: str  # greedy | sampled
    temperature: float
    prompt: str  # sent as is to /v1/completions (the chat template is already applied)
    reference: str  # the held-out answer (never trained on)
    max_tokens: int
    prompt_tokens: int
    doc_id: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _class_of(kind: str) -> str | None:
    return next((c for c, kinds in CLASSES.items() if kind in kinds), None)


def _fallback(doc: dict[str, Any]) -> tuple[str, str]:
    """A plain document as (prompt, reference): its first two thirds, then the rest (at most 1200 chars)."""
    text = doc["text"]
    cut = text.rfind("\n", 0, len(text) * 2 // 3)
    cut = cut if cut > 0 else len(text) * 2 // 3
    return text[:cut + 1], text[cut + 1:cut + 1200]


def candidates(docs: Iterable[dict[str, Any]]) -> dict[str, list[tuple[dict[str, Any], str, str]]]:
    """class -> [(doc, prompt, reference)]: task documents of its kinds, plain documents under '' ."""
    out: dict[str, list[tuple[dict[str, Any], str, str]]] = {c: [] for c in [*CLASSES, ""]}
    for doc in docs:
        cls = _class_of(doc.get("kind", ""))
        if cls is not None and doc.get("prompt"):
            out[cls].append((doc, doc["prompt"], doc["reference"]))
        elif not doc.get("kind"):
            out[""].append((doc, *_fallback(doc)))
    return out


def build_prompts(docs: Iterable[dict[str, Any]], per_class: int, seed: int, max_prompt_tokens: int = 3000,
                  max_tokens_cap: int = 256, count_tokens: Callable[[str], int] = approx_tokens) -> list[Prompt]:
    """`per_class` held-out prompts of each class, each in both modes; deterministic for (docs, seed).

    Prompts over `max_prompt_tokens` are skipped. A class without task documents of its own borrows plain
    held-out documents (each used by one class at most).
    """
    cands = candidates(docs)
    plain = sorted(cands.pop(""), key=lambda c: c[0]["id"])
    random.Random(f"{seed}:plain").shuffle(plain)
    chosen: dict[str, list[tuple[dict[str, Any], str, str, int]]] = {c: [] for c in CLASSES}

    def fill(cls: str, source: list[tuple[dict[str, Any], str, str]]) -> None:
        while source and len(chosen[cls]) < per_class:
            doc, prompt, reference = source.pop()
            if (n := count_tokens(prompt)) <= max_prompt_tokens:
                chosen[cls].append((doc, prompt, reference, n))

    for cls in CLASSES:  # first each class from its own task documents
        pool = sorted(cands[cls], key=lambda c: c[0]["id"])
        random.Random(f"{seed}:{cls}").shuffle(pool)
        fill(cls, pool)
    for cls in sorted(CLASSES, key=lambda c: len(chosen[c])):  # then the emptiest classes first from plain ones
        fill(cls, plain)
    out: list[Prompt] = []
    for cls in CLASSES:
        rng = random.Random(f"{seed}:{cls}:t")
        for i, (doc, prompt, reference, n) in enumerate(chosen[cls]):
            cap = int(doc.get("meta", {}).get("max_tokens") or max_tokens_cap)
            for mode in MODES:
                t = 0.0 if mode == "greedy" else round(rng.uniform(*SAMPLED_T), 2)
                out.append(Prompt(id=f"{cls}-{i:03d}-{mode}", cls=cls, mode=mode, temperature=t, prompt=prompt,
                                  reference=reference, max_tokens=min(cap, max_tokens_cap), prompt_tokens=n,
                                  doc_id=doc["id"]))
    return out
