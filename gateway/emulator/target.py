"""What the emulated target model generates for a request."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .drafter import EOS
from .text import DEFAULT_CONTINUATION_TOKENS, continuation, tokenize


@dataclass(frozen=True, slots=True)
class TargetOutput:
    tokens: list[str]  # exactly what will be emitted (EOS, when present, is the last)
    finish_reason: str  # "stop" (EOS reached) or "length" (max_tokens reached)


def target_output(
    prompt_tokens: Sequence[str], reference: str | None, max_tokens: int | None, ignore_eos: bool, seed: int
) -> TargetOutput:
    """The reference (tokenized) ending in EOS, or a deterministic continuation of the prompt.

    Without a reference the continuation ends in EOS after `DEFAULT_CONTINUATION_TOKENS`. With
    `ignore_eos` the text goes on (reference, then the continuation of prompt + reference) until
    `max_tokens`. `max_tokens` caps everything (finish_reason "length").
    """
    body = tokenize(reference) if reference is not None else []
    if reference is None and not ignore_eos:
        body = continuation(prompt_tokens, DEFAULT_CONTINUATION_TOKENS, seed)
    if not ignore_eos:
        if max_tokens is None or len(body) + 1 <= max_tokens:
            return TargetOutput([*body, EOS], "stop")
        return TargetOutput(body[:max_tokens], "length")
    limit = max_tokens if max_tokens is not None else len(body) + DEFAULT_CONTINUATION_TOKENS
    if len(body) < limit:
        body = body + continuation([*prompt_tokens, *body], limit - len(body), seed)
    return TargetOutput(body[:limit], "length")
