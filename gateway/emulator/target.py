"""What the emulated target model generates for a request."""

from __future__ import annotations

import random
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


# Random-weight output, like `vllm serve --load-format dummy`: a vocabulary of this many token ids. Greedy
# decoding of random weights repeats at once: vLLM 0.26 on the H200 (2026-12-03, deploy/gpu/results/
# real-h200-2026-12-03-one-gpu/*probe.jsonl) gave one token, then a 2-token cycle, for every prompt of 8 to 3,000
# words, so n-gram lookup drafts from the third output token on; sampled output never repeats (no drafts).
DUMMY_VOCAB = 128_256
DUMMY_GREEDY_LEAD = 1
DUMMY_GREEDY_CYCLE = 2


def dummy_output(max_tokens: int | None, temperature: float, seed: int) -> TargetOutput:
    """What a model with random weights generates: EOS never comes (it is one id of ~128k), so the text
    runs to `max_tokens`. Greedy (T == 0): `DUMMY_GREEDY_LEAD` tokens, then a cycle of `DUMMY_GREEDY_CYCLE`
    tokens, repeated. Sampled: fresh random ids."""
    rng = random.Random(seed)
    limit = max_tokens if max_tokens is not None else DEFAULT_CONTINUATION_TOKENS
    if temperature <= 0.0:
        lead = [f" t{rng.randrange(DUMMY_VOCAB)}" for _ in range(DUMMY_GREEDY_LEAD)]
        cycle = [f" t{rng.randrange(DUMMY_VOCAB)}" for _ in range(DUMMY_GREEDY_CYCLE)]
        tokens = [*lead, *(cycle[i % len(cycle)] for i in range(max(limit - len(lead), 0)))][:limit]
    else:
        tokens = [f" t{rng.randrange(DUMMY_VOCAB)}" for _ in range(limit)]
    return TargetOutput(tokens, "length")
