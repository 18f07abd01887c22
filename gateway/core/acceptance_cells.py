"""Pure refinement of a (class, temperature bucket)'s tokens per speculative step by the request's prompt length.

An n-gram drafter proposes tokens it finds in the prompt, so what a request accepts depends on how much of its
answer the prompt already holds: an edit of the code in its prompt ran at ~3.2 tokens a step on the emulated
n-gram server, new code from a one-line request at ~1.2, both "code" at temperature 0 (the speculative server's
median prediction error on code was 28% on the multi-turn built-in). Per (class, bucket, temperature, prompt
length in powers of two) a cell learns the log ratio of the observed tokens per step to the (class, bucket)
estimate at the time; a request's estimate is that estimate times the cell's ratio, shrunk toward the coarser
cell's as if by `SHRINK` observations.

Finer still, per prompt *family*: requests whose prompts begin with the same text (`FAMILY_BLOCKS` blocks of the
prefix index: a conversation's turns, a shared system prompt with its few-shot examples) accept alike: on the
multi-turn built-in one code conversation ran at 1.2-1.5 tokens a step on every turn and the next at 3-4, in one
(class, bucket, prompt length) cell. A family's ratio is shrunk toward its length cell's. The families kept are the
`MAX_FAMILIES` most recently seen. Cells are bounded (`MAX_CELLS`).
"""

from __future__ import annotations

import math
from collections import OrderedDict

from gateway.core.ewma import Ewma

SHRINK = 2.0
MAX_CELLS = 2048
MAX_FAMILIES = 4096
FAMILY_BLOCKS = 4  # a prompt's family: the hash of its first this many text blocks (256 characters)
MAX_LOG_RATIO = math.log(3.0)  # one observation says at most this much about the cell

Key = tuple[str, ...]


class AcceptanceCells:
    """Coarse to fine: (class, bucket, temperature in tenths) -> + prompt length -> + prompt family. Each level
    learns the log ratio of observed to estimated tokens per step, shrunk toward the level above (`SHRINK`); the
    temperature level exists because a bucket spans temperatures that accept differently (a sampled draft
    survives less often the flatter the distribution: 0.2 and 0.6 share the "low" bucket)."""

    def __init__(self, forgetting: float) -> None:
        self.forgetting = forgetting
        self._cells: dict[Key, Ewma] = {}  # mean log ratio of observed to estimated
        self._families: OrderedDict[Key, Ewma] = OrderedDict()

    @staticmethod
    def _keys(task_class: str, bucket: str, prompt_tokens: int, temperature: float) -> tuple[Key, Key]:
        t = str(round(min(max(temperature, 0.0), 2.0) * 10))
        return (task_class, bucket, t), (task_class, bucket, t, str(round(math.log2(max(prompt_tokens, 1)))))

    def ratio(self, task_class: str, bucket: str, prompt_tokens: int, family: int | None = None,
              temperature: float = 0.0) -> float:
        """How many times the (class, bucket) estimate such a request is expected to accept."""
        est = 0.0
        for key in self._keys(task_class, bucket, prompt_tokens, temperature):
            cell = self._cells.get(key)
            if cell is not None:
                est = cell.shrunk(est, SHRINK)
        fam = None if family is None else self._families.get((task_class, bucket, str(family)))
        if fam is not None:
            est = fam.shrunk(est, SHRINK)
        return math.exp(est)

    def observe(self, task_class: str, bucket: str, prompt_tokens: int, observed_tps: float, estimate_tps: float,
                weight: float, family: int | None = None, temperature: float = 0.0) -> None:
        """A speculative response: `observed_tps` tokens a step where the (class, bucket) said `estimate_tps`."""
        if observed_tps <= 0 or estimate_tps <= 0 or weight <= 0:
            return
        y = min(max(math.log(observed_tps / estimate_tps), -MAX_LOG_RATIO), MAX_LOG_RATIO)
        if family is not None:
            families, fkey = self._families, (task_class, bucket, str(family))
            fam = families.get(fkey)
            if fam is None:
                fam = families[fkey] = Ewma(0.0)
                if len(families) > MAX_FAMILIES:
                    families.popitem(last=False)
            families.move_to_end(fkey)
            fam.update(y, self.forgetting, weight)
        for key in self._keys(task_class, bucket, prompt_tokens, temperature):
            cell = self._cells.get(key)
            if cell is None:
                if len(self._cells) >= MAX_CELLS:
                    return
                cell = self._cells[key] = Ewma(0.0)
            cell.update(y, self.forgetting, weight)

    def cells(self) -> int:
        return len(self._cells) + len(self._families)


def family_of(blocks: tuple[int, ...]) -> int | None:
    """A prompt's family (see the module docstring): None for a prompt shorter than one block."""
    return blocks[min(FAMILY_BLOCKS, len(blocks)) - 1] if blocks else None
