"""Shadow prompt lookup: what an n-gram speculative server would have accepted on a response any server gave.

vLLM's n-gram proposer (`vllm/v1/spec_decode/ngram_proposer.py`, `_find_longest_matched_ngram_and_propose_tokens`)
is deterministic given the context: it matches the longest suffix of prompt + output so far, of
`prompt_lookup_max` tokens down to `prompt_lookup_min`, against an earlier position of the same context (the
*earliest* one: its reversed-KMP scan keeps the last match it finds, which is the first in the original order), and
proposes the (at most) k tokens that followed there. The target accepts the drafts that equal what it emits next,
plus one token of its own. So from a finished response's text the gateway can replay that walk and count the engine
steps the n-gram server would have taken for the same text: tokens per step, without running it. Under sampling the
read stays unbiased: a one-hot draft x is accepted with probability p(x), and a rejection never emits x, so "the
emitted token equals the draft" happens exactly as often as an acceptance.

The gateway does not know the server's tokenizer: a GPT-2-like pre-tokenization (words with their leading space,
digit runs, punctuation runs, whitespace) stands in for it. The bias that leaves (a BPE splits rare words into
several tokens; the emulator thins sampled acceptance by a coin the text does not show) is measured against the
speculative server's own counts (`ShadowCalibration`). Work is bounded: the prompt's last `max_prompt_tokens` and the
output's first `max_output_tokens` are examined, each token indexed once per n-gram size (O(n)).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

# GPT-2's pre-tokenizer without \p{L}/\p{N} (which `re` lacks): contractions, a space and letters, a space and up to
# three digits (newer BPEs split numbers so), a space and punctuation, whitespace before more whitespace, whitespace
_TOKEN = re.compile(r"""'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d{1,3}| ?[^\s\w]+|_+|\s+(?!\S)|\s+""")

MAX_PROMPT_TOKENS = 16384  # vLLM searches the whole context; a bound on the work (SPECGATE_SHADOW_MAX_PROMPT_TOKENS)
MAX_OUTPUT_TOKENS = 1024
BULK = 64  # tokens from which an extension of the index is built in bulk


def tokenize(text: str) -> list[str]:
    """The stand-in tokens of `text` (every character belongs to exactly one token)."""
    return _TOKEN.findall(text)


@dataclass(frozen=True, slots=True)
class LookupConfig:
    k: int = 4  # num_speculative_tokens
    nmin: int = 2  # prompt_lookup_min
    nmax: int = 4  # prompt_lookup_max
    max_prompt_tokens: int = MAX_PROMPT_TOKENS
    max_output_tokens: int = MAX_OUTPUT_TOKENS


@dataclass(frozen=True, slots=True)
class ShadowRead:
    """One response replayed: `tokens` of its output in `steps` engine steps (the prefill's first token is one)."""

    tokens: int
    steps: int
    drafted_steps: int  # steps on which the lookup found a match

    @property
    def tokens_per_step(self) -> float:
        return self.tokens / self.steps if self.steps else 1.0


class _Index:
    """The context's n-grams of each size, each mapped to the end (exclusive) of its first occurrence."""

    def __init__(self, cfg: LookupConfig) -> None:
        self.sizes = tuple(range(cfg.nmax, cfg.nmin - 1, -1))
        self.first: dict[tuple[str, ...], int] = {}  # one dict: keys of different sizes never collide
        self.ctx: list[str] = []

    def extend(self, tokens: Sequence[str]) -> None:
        if len(tokens) > BULK:
            self._bulk(tokens)
            return
        ctx, first = self.ctx, self.first
        for tok in tokens:
            ctx.append(tok)
            end = len(ctx)
            for n in self.sizes:
                if end >= n:
                    first.setdefault(tuple(ctx[end - n:end]), end)

    def _bulk(self, tokens: Sequence[str]) -> None:
        """`extend` for many tokens (a prompt): each size's n-grams built by `zip` and inserted in reverse order, so
        that the earliest occurrence is the one kept; entries already there are earlier still and win."""
        ctx = self.ctx
        old = len(ctx)
        ctx.extend(tokens)
        new: dict[tuple[str, ...], int] = {}
        for n in self.sizes:
            start = max(old - n + 1, 0)  # the first n-gram that ends past `old`
            grams = list(zip(*(ctx[start + j:] for j in range(n)), strict=False))
            new.update(zip(reversed(grams), range(len(ctx), start + n - 1, -1), strict=True))
        new.update(self.first)
        self.first = new

    def propose(self, k: int) -> list[str]:
        """The longest suffix (nmax .. nmin tokens) seen earlier, at its first occurrence: the k tokens after it."""
        ctx, end = self.ctx, len(self.ctx)
        for n in self.sizes:
            if end < n:
                continue
            at = self.first.get(tuple(ctx[end - n:end]))
            if at is not None and at < end:  # `at == end`: the suffix is its own first occurrence
                return ctx[at:at + k]
        return []


def replay(prompt: Sequence[str], output: Sequence[str], cfg: LookupConfig) -> ShadowRead:
    """The n-gram server's steps for `output` after `prompt` (both tokenized): the first token comes from the prefill
    (one step, as vLLM's first chunk); each later step drafts by lookup, accepts the drafts equal to the text, and
    emits one token more."""
    out = output[:cfg.max_output_tokens]
    if not out:
        return ShadowRead(0, 0, 0)
    index = _Index(cfg)
    index.extend(prompt[-cfg.max_prompt_tokens:] if cfg.max_prompt_tokens > 0 else ())
    index.extend(out[:1])
    pos, steps, drafted = 1, 1, 0
    n = len(out)
    while pos < n:
        draft = index.propose(min(cfg.k, n - pos))
        accepted = 0
        for tok in draft:
            if out[pos + accepted] != tok:
                break
            accepted += 1
        drafted += bool(draft)
        emitted = min(accepted + 1, n - pos)
        index.extend(out[pos:pos + emitted])
        pos += emitted
        steps += 1
    return ShadowRead(n, steps, drafted)


def replay_text(prompt: str, output: str, cfg: LookupConfig) -> ShadowRead:
    """`replay` on text: only the prompt's tail is tokenized (a character budget of 8 per token examined)."""
    head = output[:cfg.max_output_tokens * 8]
    return replay(tokenize(prompt[-cfg.max_prompt_tokens * 8:]), tokenize(head), cfg)


def gain_ratio(measured_tps: float, shadow_tps: float) -> float:
    """How much of the shadow's gain over one token a step the server measured (≥ 0; nan when the shadow has none)."""
    gain = shadow_tps - 1.0
    return max(measured_tps - 1.0, 0.0) / gain if gain > 0 else math.nan
