"""Drafters that make real guesses, and the acceptance rule.

- `NgramProposer`: vLLM's prompt lookup. Match the longest suffix (prompt_lookup_max .. prompt_lookup_min
  tokens) of prompt + output so far against an earlier position of the same context (the *earliest* one, as
  vLLM 0.26's reversed-KMP scan keeps) and propose the tokens that followed it. Replayed on the real n-gram
  server's greedy texts of the H200 run (real BPE, results/emulator-ngram-2026-12-05-e): this rule reproduces
  its steps exactly on 195 of 224 requests (median error 0.03%); the most recent occurrence on 132 (0.2%), and
  with prompt_lookup_min 1 instead of the served 2 on 20 (5.3%).
- `DraftModelProposer`: a draft model that learned the target's distribution: an n-gram model (contexts of
  4 tokens down to 1) over the request's own context (prompt + output so far) and over what it learned
  (`corpus.LearnedModel`: the built-in corpus plus the other references registered with the server, the
  request's own left out).

Greedy (T = 0): a drafted token is accepted iff it equals the target's next token; the first rejection ends
the step. Sampled, n-gram: the same, and a seeded per-request coin with probability
`acceptance_probability(T) = max(0, 1 - T/2)` must also say so (measured within 20% of vLLM on the trained
pair, deploy/gpu/results/2026-12-05-trained/). Sampled, draft model (`Speculation._sampled_draft`, from the
rejection sampler's min(1, p/q)): the target's token r is accepted when it is the draft's top token, else with
the draft's own tempered probability of it, q_T(r); the sampled text's entropy does the thinning.

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .corpus import BOS, ORDER, Counts, LearnedModel, add_counts, corpus_model, learned_model
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
                    self._index[n].setdefault(tuple(ctx[end - n : end]), end)  # the earliest occurrence stays
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
    """A draft model that learned the target's distribution: an n-gram model (contexts of `ORDER` down to 1
    token, the longest one seen wins) over the request's own context and the learned texts (`LearnedModel`).

    Counts from the request's context weigh `OWN_WEIGHT` times those learned elsewhere (a model copies from
    its context more readily than from what it saw in training). Greedy drafting proposes the most frequent
    next token; `probability` is the draft's own chance of a token at temperature T (Witten-Bell: the
    successors' counts over their total plus the number of distinct successors, which is the mass left for
    tokens never seen there), which the sampled acceptance rule uses.
    """

    OWN_WEIGHT = 2

    def __init__(self, context: Sequence[str], learned: LearnedModel | None = None, order: int = ORDER) -> None:
        self.learned = learned if learned is not None else learned_model()
        self.order = order
        self.own: Counts = {}
        self.ctx: list[str] = list(context)
        add_counts(self.own, self.ctx, 1, order)
        self.answer_start = len(self.ctx)  # the learned texts are answers: they start after BOS, not a prompt
        self.unigram = corpus_model().unigram

    def observe(self, tokens: Sequence[str]) -> None:
        start = len(self.ctx)
        self.ctx.extend(tokens)
        add_counts(self.own, self.ctx, start, self.order)

    def _history(self, ahead: Sequence[str]) -> tuple[list[str], list[str]]:
        """The last `order` tokens of context + `ahead`, and of BOS + the answer so far + `ahead`."""
        n = self.order
        own = [*self.ctx[-n:], *ahead][-n:]
        answer = self.ctx[max(self.answer_start, len(self.ctx) - n) :]
        start = [BOS] if len(self.ctx) - self.answer_start < n else []
        return own, [*start, *answer, *ahead][-n:]

    def _successors(self, own_hist: Sequence[str], learned_hist: Sequence[str]) -> dict[str, int]:
        """Next-token counts at the longest context (up to `order` tokens) that anything saw."""
        for k in range(min(self.order, len(own_hist)), 0, -1):
            own = self.own.get(tuple(own_hist[-k:]))
            learned = self.learned.successors(tuple(learned_hist[-k:])) if k <= len(learned_hist) else {}
            if own or learned:
                merged = dict(learned)
                for tok, c in (own or {}).items():
                    merged[tok] = merged.get(tok, 0) + self.OWN_WEIGHT * c
                return merged
        return {}

    def propose(self, k: int) -> list[str]:
        out: list[str] = []
        for _ in range(max(k, 0)):
            succ = self._successors(*self._history(out))
            out.append(max(succ.items(), key=lambda kv: kv[1])[0] if succ else self.unigram)
        return out

    def probability(self, ahead: Sequence[str], token: str, temperature: float) -> float:
        """The draft's probability of `token` after the context plus `ahead`, at `temperature` > 0."""
        succ = self._successors(*self._history(ahead))
        if token not in succ:
            return 0.0
        inv = 1.0 / max(temperature, 1e-3)
        total = sum(succ.values()) + len(succ)  # Witten-Bell: len(succ) is the unseen tokens' share
        z = sum((c / total) ** inv for c in succ.values()) + (len(succ) / total) ** inv
        return float((succ[token] / total) ** inv / z)


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
        learned: LearnedModel | None = None,
    ) -> None:
        self.gamma = profile.gamma
        self.temperature = max(temperature, 0.0)
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
            self.proposer = DraftModelProposer(prompt_tokens, learned)

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
        elif isinstance(self.proposer, DraftModelProposer) and self.temperature > 0:
            accepted = self._sampled_draft(drafts, target, pos)
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

    def _sampled_draft(self, drafts: Sequence[str], target: Sequence[str], pos: int) -> int:
        """Sampled drafting, from vLLM's rejection sampler: the draft samples x from its distribution q (at
        the request's temperature) and x is accepted with min(1, p(x)/q(x)); given that the target's output
        is r (the reference), the draft was accepted with probability min(1, q(r)/p(r)). The emulator knows r
        and q (the n-gram draft's tempered counts), not p. Where r is the draft's own top token, the draft is
        at least as sure of it as the target (q(r) >= p(r)): accepted. Elsewhere p(r) is taken as 1 (a lower
        bound): accepted with q_T(r). At T -> 0 this is the greedy rule; the higher the entropy of what the
        target wrote, the more often r is not the draft's top token and the more acceptance thins."""
        assert isinstance(self.proposer, DraftModelProposer)
        accepted = 0
        while accepted < len(drafts) and pos + accepted < len(target):
            r = target[pos + accepted]
            if drafts[accepted] != r:
                q = self.proposer.probability(target[pos : pos + accepted], r, self.temperature)
                if self.rng.random() >= q:
                    break
            accepted += 1
        return accepted


def request_seed(prompt: str, reference: str | None) -> int:
    return stable_seed(prompt, reference or "")


def offline_tokens_per_step(
    profile: str, prompt: str, reference: str, temperature: float, references: Mapping[str, str] | None = None
) -> float:
    """Mean tokens per decode step the speculative server would achieve generating `reference` (plus EOS)
    after `prompt`, with the same drafter and acceptance rule as the emulated server (whose registered
    `references` the draft model learned from, this one's own left out). The first token (made by the
    prefill step, never speculative) is not counted."""
    prof = get_profile(profile)
    prompt_tokens = tokenize(prompt)
    target = [*tokenize(reference), EOS]
    learned = learned_model(references).without(reference) if references and prof.method == "draft_model" else None
    spec = Speculation(prof, prompt_tokens, temperature, request_seed(prompt, reference), learned=learned)
    spec.observe(target[:1])
    pos, steps = 1, 0
    while pos < len(target):
        drafts = spec.propose(len(target) - pos)
        pos += len(spec.verify(drafts, target, pos).tokens)
        steps += 1
    return (len(target) - 1) / steps if steps else 1.0
