"""Pure refinement of a (class, temperature bucket)'s tokens per speculative step by what the request shows.

An n-gram drafter proposes tokens it finds in the prompt, so what a request accepts depends on how much of its
answer the prompt already holds: an edit of the code in its prompt ran at ~3.2 tokens a step on the emulated
n-gram server, new code from a one-line request at ~1.2, both "code" at temperature 0 (the speculative server's
median prediction error on code was 28% on the multi-turn built-in). Coarse to fine, per (class, bucket,
temperature) -> + whether the prompt carries a copy source (`classify.Features.copy_source`: a block of text the
answer may repeat) -> + prompt length in powers of two, a cell learns the tokens per decode step its requests
delivered; a request's estimate starts at the (class, bucket) estimate and each cell pulls it toward its own value,
shrunk toward the level above as if that had `SHRINK` responses (a new cell starts from its neighbours).

A cell holds what its requests delivered, not their ratio to the (class, bucket) estimate at the time: that estimate
moves while the cells fill (it starts at the prior, 1.2, and an edit-heavy class climbs to ~2), so ratios learned
early against the prior, applied to the later estimate, compounded the climb. On azure-code-b's 1 + 1 fleet
(results/fleet-2026-12-05-f) the class read 2.06 tokens a decode step where its requests delivered 2.06, but the
edits' cell read 3.99 (delivered 3.29) and new code's 1.57 (delivered 1.14): the reads implied 0.64x the decode
steps the speculative server took.

A cell's value is a ratio of sums: Σ observed × decode steps over Σ decode steps, so that the steps it
predicts for a cell's requests add up to the steps they took. A mean over responses (each counted once) reads low:
short answers accept little and are many (all-structured Azure code: 1.07 tokens a step over responses of < 8
steps, 2.06 over those of >= 64), while the long ones take most of the steps. The evidence a cell holds (how far it
is trusted against the cell above) still counts each response at most once.

Finer still, per prompt *family*: requests whose prompts begin with the same text (`FAMILY_BLOCKS` blocks of the
prefix index: a conversation's turns, a shared system prompt with its few-shot examples) accept alike: on the
multi-turn built-in one code conversation ran at 1.2-1.5 tokens a step on every turn and the next at 3-4, in one
(class, bucket, prompt length) cell. A family's value is shrunk toward its length cell's. The families kept are the
`MAX_FAMILIES` most recently seen. Cells are bounded (`MAX_CELLS`).

Across all of these, the answer's *length*: an n-gram drafter finds more to copy the longer an answer runs (it
matches its own earlier output too), so one (class, bucket) cell spans short answers that hardly speculate and long
ones that do. All-structured Azure code on the n-gram fleet (results/fleet-2026-12-05-g): 1.02 tokens a decode step
over answers of ~8 tokens, 1.11 at 16, 1.29 at 64, 1.4 at 128, 1.9-2.4 at 512-2048, against the n-gram server's
break-even of ~1.37 (its step over the baseline's). Read at the class's 1.37, every request was a coin toss, and the
few long answers (a 1,899-token one: 10.1 s on the baseline, 5.9 s speculated) went wherever it fell, ~3-6% of the
trace's mean. So each (class, bucket, temperature, copy source) also keeps cells per answer length in powers of two
(keyed by the delivered length; read at the predicted one), and a request's estimate from the cells above is scaled by
its length's value over the length-blind cell's: the length cell shrunk toward the line through the lengths seen
(`LengthCells`), a length not seen yet the line. Under the copy-source level, not the class: edits are long
and copy much, so a length cell of the class would count the copy source's gain a second time.

An answer longer than any its cell has delivered is read off that cell's shorter answers, and where they quoted
(azure-conv-a, 2 + 2: a "code" cell's short answers at 1.6 read its first 400-token ones at 1.5-1.6; they ran at 1.04,
4-6 such a run, results/fleet-peers-2026-12-06-j) that over-reads. So such a first long answer is bounded by what
answers of its length delivered in its class over every copy kind and temperature (where the class has none, its
bucket's): `_first_long_bound`, `FIRST_LONG_EVIDENCE`. A bound, not a value: a cell whose long answers copy more than
its class's proves it with its own first one.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field

SHRINK = 2.0
MAX_CELLS = 2048
MAX_FAMILIES = 4096
FAMILY_BLOCKS = 4  # a prompt's family: the hash of its first this many text blocks (256 characters)
EVIDENCE_STEPS = 16.0  # a response of this many decode steps counts as one in a cell's evidence
MAX_RATIO = 3.0  # one observation says at most this many times the (class, bucket) estimate (either way)
LENGTH_SHRINK = 1.0  # the pull of the line through the length cells on one of them, in responses
LENGTH_SLOPE_PRIOR = 4.0  # the line's slope is shrunk toward flat as if this many responses an octave off read flat
MIN_LENGTH = 8  # answers up to this many tokens share one length cell
FIRST_LONG_EVIDENCE = 1.0  # responses of a length in its class before they bound a cell's first answer that long
MAX_RESPONSE_WEIGHT = 32.0  # a response's weight in its class's acceptance (`Learner`), in 16 decode steps (512)

Key = tuple[str, ...]
LEVELS = ("temperature", "copy", "prompt")  # (class, bucket, temperature) -> + copy source -> + prompt length
# the copy kind over all classes of the bucket -> + class -> + temperature -> + prompt length
BY_KIND_LEVELS = ("kind", "class_kind", "temperature", "prompt")


@dataclass(slots=True)
class RatioCell:
    """A forgetting ratio of sums: Σ value × steps / Σ steps, with the responses behind it as its evidence."""

    scaled: float = 0.0
    steps: float = 0.0
    evidence: float = 0.0

    def update(self, value: float, steps: float, evidence: float, forgetting: float) -> None:
        self.scaled = self.scaled * forgetting + value * steps
        self.steps = self.steps * forgetting + steps
        self.evidence = self.evidence * forgetting + evidence

    def shrunk(self, prior: float, prior_weight: float) -> float:
        """The value pulled toward `prior` as if that had `prior_weight` responses."""
        if self.steps <= 0 or self.evidence + prior_weight <= 0:
            return prior
        return (self.scaled / self.steps * self.evidence + prior * prior_weight) / (self.evidence + prior_weight)


class AcceptanceCells:
    """Coarse to fine: (class, bucket, temperature in tenths) -> + copy source -> + prompt length -> + prompt
    family. Each level learns the tokens per decode step its requests delivered, shrunk toward the level above
    (`SHRINK`; the top level toward the (class, bucket) estimate); the temperature level exists because a bucket
    spans temperatures that accept differently (a sampled draft survives less often the flatter the distribution:
    0.2 and 0.6 share the "low" bucket)."""

    def __init__(self, forgetting: float, by_kind: bool = False) -> None:
        self.forgetting = forgetting
        self.by_kind = by_kind  # the copy kind first, over the classes (`BY_KIND_LEVELS`), else `LEVELS`
        self._cells: dict[Key, RatioCell] = {}
        self._families: OrderedDict[Key, RatioCell] = OrderedDict()
        self._lengths: dict[Key, LengthCells] = {}  # per (class, bucket, temperature, copy kind)
        self._coarse_lengths: dict[Key, LengthCells] = {}  # per (class, bucket) and per bucket: `_first_long_bound`

    def _keys(self, task_class: str, bucket: str, prompt_tokens: int, temperature: float,
              c: str) -> tuple[Key, ...]:
        t = str(round(min(max(temperature, 0.0), 2.0) * 10))
        p = str(round(math.log2(max(prompt_tokens, 1))))
        if self.by_kind:
            return (bucket, c), (task_class, bucket, c), (task_class, bucket, c, t), (task_class, bucket, c, t, p)
        return (task_class, bucket, t), (task_class, bucket, t, c), (task_class, bucket, t, c, p)

    def _family_key(self, keys: tuple[Key, ...], family: int) -> Key:
        return (*(keys[1] if self.by_kind else keys[0][:2]), str(family))  # (class, bucket[, copy kind], family)

    def explained(self, mean: float, task_class: str, bucket: str, prompt_tokens: int, family: int | None = None,
                  temperature: float = 0.0, copy_kind: str = "new",
                  output_tokens: float | None = None) -> tuple[float, str]:
        """Tokens per decode step such a request is expected to accept, from `mean`, its (class, bucket)'s; with
        `output_tokens` (its predicted length), scaled by what answers of that length delivered. And its source: the
        levels that held evidence, coarse to fine (`class`: none did)."""
        est, used = mean, []
        keys = self._keys(task_class, bucket, prompt_tokens, temperature, copy_kind)
        names = BY_KIND_LEVELS if self.by_kind else LEVELS
        for key, name in zip(keys, names, strict=True):
            cell = self._cells.get(key)
            if cell is not None:
                est = cell.shrunk(est, SHRINK)
                used.append(name)
        fam = None if family is None else self._families.get(self._family_key(keys, family))
        if fam is not None:
            est = fam.shrunk(est, SHRINK)
            used.append("family")
        if output_tokens is not None:
            factor = self._length_factor(keys[-2], output_tokens)
            est *= factor
            if factor != 1.0:
                used.append("length")
            bound = self._first_long_bound(keys[-2], task_class, bucket, output_tokens)
            if bound is not None and bound < est:
                est = bound
                used.append("class_length")
        return est, ">".join(used) or "class"

    def _first_long_bound(self, top: Key, task_class: str, bucket: str, output_tokens: float) -> float | None:
        """For an answer longer than any its cell has delivered: what answers of its length delivered in its class
        (or, where its class has none, its bucket), a bound on the cell's reading (None: nothing to bound by)."""
        length, own = _length_key(output_tokens), self._lengths.get(top)
        if own is not None and any(k >= length and c.evidence > 0 for k, c in own.cells.items()):
            return None
        for key in ((task_class, bucket), (bucket,)):
            cells = self._coarse_lengths.get(key)
            cell = None if cells is None else cells.cells.get(length)
            if cell is not None and cell.steps > 0 and cell.evidence >= FIRST_LONG_EVIDENCE:
                return cell.scaled / cell.steps
        return None

    def _length_factor(self, top: Key, output_tokens: float) -> float:
        """What answers of this length delivered over what the length-blind cell holds (1: not known)."""
        cell, lengths = self._cells.get(top), self._lengths.get(top)
        if cell is None or cell.steps <= 0 or lengths is None:
            return 1.0
        blind = cell.scaled / cell.steps
        value = lengths.value(_length_key(output_tokens), blind)
        return min(max(value / blind, 1.0 / MAX_RATIO), MAX_RATIO)

    def observe(self, task_class: str, bucket: str, prompt_tokens: int, observed_tps: float, estimate_tps: float,
                steps: float, family: int | None = None, temperature: float = 0.0, copy_kind: str = "new",
                tokens: int | None = None) -> None:
        """A speculative response of `tokens` tokens: `observed_tps` tokens per decode step over `steps` decode
        steps, where the (class, bucket) said `estimate_tps`."""
        if observed_tps <= 0 or estimate_tps <= 0 or steps <= 0:
            return
        value = min(max(observed_tps, estimate_tps / MAX_RATIO), estimate_tps * MAX_RATIO)
        evidence = min(steps / EVIDENCE_STEPS, 1.0)  # a response counts once at most: its acceptance is noisy
        keys = self._keys(task_class, bucket, prompt_tokens, temperature, copy_kind)
        if family is not None:
            families, fkey = self._families, self._family_key(keys, family)
            fam = families.get(fkey)
            if fam is None:
                fam = families[fkey] = RatioCell()
                if len(families) > MAX_FAMILIES:
                    families.popitem(last=False)
            families.move_to_end(fkey)
            fam.update(value, steps, evidence, self.forgetting)
        if tokens is not None and (keys[-2] in self._lengths or len(self._lengths) < MAX_CELLS):
            self._lengths.setdefault(keys[-2], LengthCells()).observe(_length_key(tokens), value, steps, evidence,
                                                                      self.forgetting)
        if tokens is not None:  # two keys a (class, bucket): bounded by the classes a deployment has
            for coarse in ((task_class, bucket), (bucket,)):
                self._coarse_lengths.setdefault(coarse, LengthCells()).observe(_length_key(tokens), value, steps,
                                                                               evidence, self.forgetting)
        for key in keys:
            cell = self._cells.get(key)
            if cell is None:
                if len(self._cells) >= MAX_CELLS:
                    return
                cell = self._cells[key] = RatioCell()
            cell.update(value, steps, evidence, self.forgetting)

    def cells(self) -> int:
        return len(self._cells) + len(self._families) + sum(len(c.cells) for c in self._lengths.values())


def _length_key(tokens: float) -> int:
    """An answer's length cell: powers of two, the shortest answers in one."""
    return round(math.log2(max(tokens, MIN_LENGTH)))


@dataclass(slots=True)
class LengthCells:
    """Tokens per decode step per answer length (powers of two) of one (class, bucket, temperature, copy source), and
    the line through them on log length (weighted by their evidence; its slope at least 0): a length not seen yet
    reads the line, a cell seen reads its value shrunk toward the line. Long answers are rare and a class's first one
    comes before any long answer was speculated (all-structured 1 + 1: the 1,024- and 2,048-token answers at 15-21 s,
    each the first of its length), so the growth over the short answers' lengths is what there is to go by. That
    growth is a regression slope, shrunk toward flat by `LENGTH_SLOPE_PRIOR` (ridge): two answers an octave apart,
    one at 1.1 and one at 1.64 tokens a step, read a 400-token answer of conversation text at 2.9 and sent it to a
    speculative server where it ran at 1.04 (azure-conv-a, 2 + 2: 1.6 s over its prediction, twice in one run)."""

    cells: dict[int, RatioCell] = field(default_factory=dict)

    def observe(self, length: int, value: float, steps: float, evidence: float, forgetting: float) -> None:
        for k, cell in self.cells.items():  # one forgetting clock for the line's points
            if k != length:
                cell.update(0.0, 0.0, 0.0, forgetting)
        self.cells.setdefault(length, RatioCell()).update(value, steps, evidence, forgetting)

    def value(self, length: int, blind: float) -> float:
        """The tokens per decode step of answers of `length`; `blind` (the length-blind cell's) where none is known."""
        points = [(k, c.scaled / c.steps, c.evidence) for k, c in self.cells.items() if c.steps > 0 and c.evidence > 0]
        if not points:
            return blind
        w = sum(e for *_, e in points)
        kbar, vbar = sum(k * e for k, _, e in points) / w, sum(v * e for _, v, e in points) / w
        spread = sum(e * (k - kbar) ** 2 for k, _, e in points)
        slope = max(sum(e * (k - kbar) * (v - vbar) for k, v, e in points) / (spread + LENGTH_SLOPE_PRIOR), 0.0)
        line = vbar + slope * (length - kbar)
        cell = self.cells.get(length)
        return line if cell is None else cell.shrunk(line, LENGTH_SHRINK)


def decode_tokens_per_step(tokens: int, steps: int, gamma: int) -> tuple[float, int]:
    """A streamed response's tokens per decode step and its decode steps: the first chunk is the prefill's one
    token, the rest are decode steps (a one-chunk response: its tokens over that chunk). Bounded to [1, γ + 1]."""
    decode_steps = steps - 1 if steps > 1 and tokens > 1 else steps
    decode_tokens = tokens - 1 if decode_steps < steps else tokens
    tps = decode_tokens / max(decode_steps, 1)
    return min(max(tps, 1.0), gamma + 1.0), max(decode_steps, 1)


def family_of(blocks: tuple[int, ...]) -> int | None:
    """A prompt's family (see the module docstring): None for a prompt shorter than one block."""
    return blocks[min(FAMILY_BLOCKS, len(blocks)) - 1] if blocks else None


def acceptance_rate(tokens_per_step: float, gamma: int) -> float:
    """Per-token acceptance α with (1 − α^(γ+1)) / (1 − α) = tokens per step (bisection)."""
    target = min(max(tokens_per_step, 1.0), gamma + 1.0)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        expected = sum(mid**k for k in range(gamma + 1))
        if expected < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2
