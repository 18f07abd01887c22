"""What a task generator returns, and small helpers shared by the generators."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# Workload kind -> the gateway class it is meant to exercise (the gateway classifies on its own; this is
# only the generator's intent, used by the bench's per-kind summaries).
KIND_CLASS = {
    "json_object": "structured",
    "json_schema": "structured",
    "extraction_json": "structured",
    "sql": "structured",
    "code_edit": "code",
    "code_gen": "code",
    "chat": "chat",
    "extraction": "extraction",
    "creative": "creative",
    "long_context": "long_context",
}
KINDS = tuple(KIND_CLASS)
CLIENT_MAX_TOKENS = (64, 128, 256, 512, 1024, 2048)
_TOKEN = re.compile(r"\w+|[^\w\s]")


@dataclass(frozen=True, slots=True)
class Task:
    kind: str
    endpoint: str
    body: dict[str, Any]
    reference: str


def approx_tokens(text: str) -> int:
    """Rough token count (words and punctuation); only used to pick a client-like `max_tokens` cap."""
    return len(_TOKEN.findall(text))


def max_tokens_for(reference: str) -> int:
    """The smallest round cap a client would set that leaves the reference room to finish."""
    need = int(approx_tokens(reference) * 1.6) + 8
    return next((cap for cap in CLIENT_MAX_TOKENS if cap >= need), CLIENT_MAX_TOKENS[-1])


def chat_body(messages: list[dict[str, str]], reference: str, temperature: float, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "target",
        "messages": messages,
        "max_tokens": max_tokens_for(reference),
        "temperature": round(temperature, 2),
        "stream": True,
    }
    body.update(extra)
    return body


def fenced(code: str, language: str) -> str:
    return f"```{language}\n{code.rstrip()}\n```"


def truncate_words(text: str, max_words: int) -> str:
    """The leading sentences of `text` that fit in `max_words` words (at least one sentence)."""
    words = text.split()
    if len(words) <= max_words:
        return " ".join(words)
    cut = " ".join(words[:max_words])
    end = cut.rfind(". ")
    return cut[: end + 1] if end > len(cut) // 3 else cut + "."
