"""Drafters that make real guesses, and the acceptance rule.

- `NgramProposer`: vLLM's prompt lookup. Match the longest suffix (prompt_lookup_max .. prompt_lookup_min
  tokens) of prompt + output so far against an earlier position of the same context (the most recent
  one) and propose the tokens that followed it.
- `DraftModelProposer`: a weak language model standing in for the small draft model: greedy trigram ->
  bigram backoff over the request's own context (prompt + output so far) first, then over a small
  built-in corpus (`corpus.py`).

A drafted token is accepted iff it equals the target's next token and, when sampling (temperature T > 0),
a seeded per-request coin with probability `acceptance_probability(T) = max(0, 1 - T/2)` says so;
the first rejection ends the step. This approximates the rejection sampler's min(1, p/q): a flatter
target distribution at higher temperature agrees less often with a greedy draft.

With `synthetic_acceptance_length` L (vLLM's synthetic rejection sampler), a step accepts floor(L-1)
drafts plus one more with probability frac(L-1) (capped at γ), whatever was proposed, as vLLM 0.26 did
(its per-position counters show exactly that pattern), so the mean tokens per drafting step is L. Two
things still apply, as on the real H200 run: an n-gram profile drafts only on steps where prompt-lookup
finds a match, and the temperature rule above thins the accepted run.

With a per-request `tokens_per_step` T (`specgate plan --from`: the mean a deployment measured for the
request's class over every step, lookup misses and temperature included), every step drafts γ and accepts
floor(T-1) or one more, to a mean of T tokens a step; neither the lookup nor the temperature rule applies.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .corpus import CorpusModel, corpus_model
from .profiles import Profile, get_profile
from .text import stable_seed, tokenize

EOS = ""  # the end-of-sequence token: counts as a generated token, has no text


def acceptance_probability(temperature: float) -> float:
    """Chance that a draft equal to the target's greedy token survives sampling at `temperature`."""
    return max(0.0, 1.0 - max(temperature, 0.0) / 2.0)


class Proposer(Protocol):
    def observe(self, tokens: Sequence[str]) -> None: ...

    def propose(self, k: int) -> list[str]: ...


class NgramProposer:
    """Prompt lookup over the request's context, indexed incrementally (O(k) per step)."""

    def __init__(self, context: Sequence[str], nmin: int = 1, nmax: int = 4) -> None:
        self.ctx: list[str] = list(context)
        self.sizes = list(range(nmax, nmin - 1, -1))
        self._index: dict[int, dict[tuple[str, ...], int]] = {n: {} for n in self.sizes}
        self._indexed = 0  # n-grams ending (exclusive) before this position are in the index

    def observe(self, tokens: Sequence[str]) -> None:
        self.ctx.extend(tokens)

    def _catch_up(self) -> None:
        ctx = self.ctx
        for end in range(max(self._indexed, 1), len(ctx)):
            for n in self.sizes:
                if end >= n:
                    self._index[n][tuple(ctx[end - n : end])] = end
        self._indexed = len(ctx)

    def propose(self, k: int) -> list[str]:
        if k <= 0 or not self.ctx:
            return []
        self._catch_up()
        for n in self.sizes:
            if len(self.ctx) < n:
                continue
            end = self._index[n].get(tuple(self.ctx[-n:]))
            if end is not None:
                return self.ctx[end : end + k]
        return []


class DraftModelProposer:
    """Greedy trigram/bigram model of the request's context, backed off to the built-in corpus."""

    def __init__(self, context: Sequence[str], corpus: CorpusModel | None = None) -> None:
        self.corpus = corpus or corpus_model()
        self.tri: dict[tuple[str, str], dict[str, int]] = {}
        self.bi: dict[str, dict[str, int]] = {}
        self.best_tri: dict[tuple[str, str], tuple[str, int]] = {}
        self.best_bi: dict[str, tuple[str, int]] = {}
        self.last: list[str] = []
        self.observe(context)

    def observe(self, tokens: Sequence[str]) -> None:
        for tok in tokens:
            if self.last:
                self._count(self.bi, self.best_bi, self.last[-1], tok)
            if len(self.last) >= 2:
                self._count(self.tri, self.best_tri, (self.last[-2], self.last[-1]), tok)
            self.last = [*self.last[-1:], tok]

    @staticmethod
    def _count(table: dict, best: dict, key: object, tok: str) -> None:  # type: ignore[type-arg]
        counts = table.setdefault(key, {})
        c = counts.get(tok, 0) + 1
        counts[tok] = c
        if key not in best or c > best[key][1]:
            best[key] = (tok, c)

    def _predict(self, a: str | None, b: str) -> str:
        if a is not None:
            hit = self.best_tri.get((a, b))
            if hit is not None:
                return hit[0]
            tok = self.corpus.trigram.get((a, b))
            if tok is not None:
                return tok
        hit2 = self.best_bi.get(b)
        if hit2 is not None:
            return hit2[0]
        return self.corpus.bigram.get(b, self.corpus.unigram)

    def propose(self, k: int) -> list[str]:
        if not self.last:
            return [self.corpus.unigram] * max(k, 0)
        a: str | None = self.last[-2] if len(self.last) >= 2 else None
        b = self.last[-1]
        out: list[str] = []
        for _ in range(k):
            tok = self._predict(a, b)
            out.append(tok)
            a, b = b, tok
        return out


@dataclass(frozen=True, slots=True)
class StepOutcome:
    tokens: list[str]  # emitted this step: accepted drafts plus the target's own token
    drafted: int  # draft tokens verified this step (0: no proposal)
    accepted: int


def _draw_count(mean: float, rng: random.Random) -> int:
    """floor(mean) or one more, so that the expected count is `mean`."""
    whole = math.floor(mean)
    return whole + (1 if rng.random() < mean - whole else 0)


class Speculation:
    """Per-sequence speculative decoding against a known target token sequence."""

    def __init__(
        self,
        profile: Profile,
        prompt_tokens: Sequence[str],
        temperature: float,
        seed: int,
        synthetic_acceptance_length: float | None = None,
        tokens_per_step: float | None = None,
    ) -> None:
        self.gamma = profile.gamma
        self.synthetic = synthetic_acceptance_length
        self.tokens_per_step = tokens_per_step
        self.accept_p = acceptance_probability(temperature)
        self.rng = random.Random(seed)
        self.proposer: Proposer | None = None
        # with tokens_per_step there is no proposer: every step drafts γ, accepted to that mean
        if tokens_per_step is None and profile.method == "ngram":
            # Even with synthetic acceptance, n-gram lookup drafts only where prompt + output repeat
            # (seen on the H200: sampled requests drafted nothing and ran at 1.00 token a step).
            self.proposer = NgramProposer(prompt_tokens, profile.ngram_min, profile.ngram_max)
        elif tokens_per_step is None and synthetic_acceptance_length is None:
            self.proposer = DraftModelProposer(prompt_tokens)

    def observe(self, tokens: Sequence[str]) -> None:
        if self.proposer is not None:
            self.proposer.observe(tokens)

    def propose(self, remaining: int, gamma: int | None = None) -> list[str]:
        """Draft tokens for the next step (at most γ, or `gamma` this step, and at most remaining - 1)."""
        k = min(self.gamma if gamma is None else gamma, remaining - 1)
        if k <= 0:
            return []
        if self.proposer is None:
            return ["?"] * k
        return self.proposer.propose(k)

    def verify(self, drafts: Sequence[str], target: Sequence[str], pos: int) -> StepOutcome:
        """Accept a prefix of `drafts` against target[pos:], emit it plus the target's next token."""
        accepted = 0
        if self.tokens_per_step is not None and drafts:
            # a measured mean over every step (temperature included): no thinning on top
            accepted = max(0, min(_draw_count(self.tokens_per_step - 1.0, self.rng), len(drafts)))
        elif self.synthetic is not None and drafts:
            accepted = max(0, min(_draw_count(self.synthetic - 1.0, self.rng), len(drafts)))
            if self.accept_p < 1.0:  # the documented temperature rule applies to synthetic runs too
                kept = 0
                while kept < accepted and self.rng.random() < self.accept_p:
                    kept += 1
                accepted = kept
        else:
            for i, d in enumerate(drafts):
                if pos + i >= len(target) or d != target[pos + i]:
                    break
                if self.accept_p < 1.0 and self.rng.random() >= self.accept_p:
                    break
                accepted += 1
        tokens = list(target[pos : pos + accepted + 1])
        self.observe(tokens)
        return StepOutcome(tokens, len(drafts), accepted)


def request_seed(prompt: str, reference: str | None) -> int:
    return stable_seed(prompt, reference or "")


def offline_tokens_per_step(profile: str, prompt: str, reference: str, temperature: float) -> float:
    """Mean tokens per decode step the speculative server would achieve generating `reference` (plus EOS)
    after `prompt`, with the same drafter and acceptance rule as the emulated server. The first token
    (made by the prefill step, never speculative) is not counted."""
    prof = get_profile(profile)
    prompt_tokens = tokenize(prompt)
    target = [*tokenize(reference), EOS]
    spec = Speculation(prof, prompt_tokens, temperature, request_seed(prompt, reference))
    spec.observe(target[:1])
    pos, steps = 1, 0
    while pos < len(target):
        drafts = spec.propose(len(target) - pos)
        pos += len(spec.verify(drafts, target, pos).tokens)
        steps += 1
    return (len(target) - 1) / steps if steps else 1.0
