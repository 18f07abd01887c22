"""Pure per-request prediction of a completion's length from what the request says, and of its error.

Output length dominates the predicted latency, and one number per (class, temperature bucket) missed by ~20%
(median) on the built-in workloads: apps size `max_tokens` to the task, and the share of it a class uses depends
on how much was asked (a 64-token SQL answer uses ~55% of it, a 1,024-token chat answer ~33%). So:

- with `max_tokens` set, the prediction is a share of it, learned in log space (the median request) per cell
  (class, temperature bucket, `max_tokens` in powers of two), each cell shrunk toward (class, `max_tokens`),
  then `max_tokens` over all classes, then the class, then all requests (`SHRINK` observations each): a new cell
  starts from its neighbours. The size asked over all classes comes after the class: where apps size
  `max_tokens` to the answer, the share depends on the size more than on the class (Azure code windows,
  results/fleet-2026-12-05-g: ~0.2 of 64 tokens, 0.7-0.8 of 128-2,048 in every class), and a class's first
  long request read at its short ones' share was predicted at a third of its length. A size nobody has asked yet
  starts from the share of the nearest size asked (`NEAREST_OCTAVES`), not the class's over all sizes: on
  azure-code-a (results/fleet-predict-2026-12-06-k) 385 of 421 requests ask 64 tokens and use ~0.2 of it, and the
  first 1,024- and 2,048-token asks, read at that share, were predicted at 0.34x and 0.28x their length, while the
  128-512-token asks had used 0.6-0.8;
- without `max_tokens`, the length itself, per (class, bucket, prompt length in powers of two), shrunk the same
  way toward (class, bucket), the class, all requests;
- structured output (`response_format` JSON, tools, guided decoding) is a class of its own here.

Each cell also learns the spread of its log error (`error`): how far off its prediction typically is. One
observation moves a cell at most a factor of `CLIP` from the current prediction (one runaway answer cannot set
a class's length), and the cells are bounded in number (`MAX_CELLS`; past it, new fine cells are not made and
their requests use the coarser levels).
"""

from __future__ import annotations

import math

from gateway.core.ewma import Ewma

SHRINK = 2.0  # a cell counts as this many observations of the level above it
CLIP = 3.0
MAX_CELLS = 4096
PRIOR_SHARE = 0.5  # of max_tokens, before anything is learned
NEAREST_OCTAVES = 4  # a size not asked yet starts from the share of a size asked this many octaves away at most

Key = tuple[str, ...]


def _pow2(x: float) -> str:
    return str(round(math.log2(max(x, 1.0))))


class OutputLengths:
    def __init__(self, prior_output_tokens: float, forgetting: float) -> None:
        self.prior_log = math.log(max(prior_output_tokens, 1.0))
        self.forgetting = forgetting
        self._cells: dict[Key, Ewma] = {}

    @staticmethod
    def _keys(task_class: str, bucket: str, max_tokens: int | None, prompt_tokens: int,
              structured: bool) -> tuple[Key, ...]:
        """Coarse to fine."""
        cls = task_class + "+json" if structured else task_class
        if max_tokens is not None:
            m = _pow2(max_tokens)
            return ("f",), ("f", cls), ("f", m), ("f", cls, m), ("f", cls, bucket, m)
        return ("n",), ("n", cls), ("n", cls, bucket), ("n", cls, bucket, _pow2(prompt_tokens))

    def _log_estimate(self, keys: tuple[Key, ...], prior: float) -> tuple[float, float]:
        """The finest cell's mean, each level shrunk toward the one above; and the spread of its error."""
        est, var, cells = prior, 0.25, self._cells
        for key in keys:
            cell = cells.get(key)
            if cell is None and len(key) == 2 and key[0] == "f" and key[1].isdigit():  # a size not asked yet
                near = self._nearest_size(int(key[1]))
                if near is not None:  # the size counts more than the class: its share, not shrunk toward the class's
                    est = near.value
                continue
            if cell is not None and cell.weight > 0:
                est = cell.shrunk(est, SHRINK)
                if cell.count >= 2:
                    var = (cell.var * cell.weight + var * SHRINK) / (cell.weight + SHRINK)
        return est, math.sqrt(var)

    def _nearest_size(self, octave: int) -> Ewma | None:
        """The share learned at the nearest `max_tokens` asked (in octaves; of two as near, the one with more
        evidence), for a size not asked yet: see the module docstring."""
        for d in range(1, NEAREST_OCTAVES + 1):
            seen = [c for c in (self._cells.get(("f", str(octave - d))), self._cells.get(("f", str(octave + d))))
                    if c is not None and c.weight > 0]
            if seen:
                return max(seen, key=lambda c: c.weight)
        return None

    def predict(self, task_class: str, bucket: str, max_tokens: int | None, prompt_tokens: int,
                structured: bool) -> float:
        """Expected completion tokens (the median request), never above `max_tokens`."""
        keys = self._keys(task_class, bucket, max_tokens, prompt_tokens, structured)
        if max_tokens is None:
            return max(math.exp(self._log_estimate(keys, self.prior_log)[0]), 1.0)
        share = math.exp(self._log_estimate(keys, math.log(PRIOR_SHARE))[0])
        return max(min(share, 1.0) * max_tokens, 1.0)

    def error(self, task_class: str, bucket: str, max_tokens: int | None, prompt_tokens: int,
              structured: bool) -> float:
        """The typical log error of `predict` for such a request (0.3: off by ~35% either way)."""
        keys = self._keys(task_class, bucket, max_tokens, prompt_tokens, structured)
        return self._log_estimate(keys, 0.0)[1]

    def observe(self, task_class: str, bucket: str, max_tokens: int | None, prompt_tokens: int, structured: bool,
                completion_tokens: int) -> None:
        if completion_tokens <= 0:
            return
        keys = self._keys(task_class, bucket, max_tokens, prompt_tokens, structured)
        if max_tokens is None:
            y, prior = math.log(completion_tokens), self.prior_log
        else:
            y, prior = math.log(min(completion_tokens / max(max_tokens, 1), 1.0)), math.log(PRIOR_SHARE)
        ref = self._log_estimate(keys, prior)[0]
        y = min(max(y, ref - math.log(CLIP)), ref + math.log(CLIP))
        cells = self._cells
        est = prior
        for key in keys:
            cell = cells.get(key)
            if cell is None:
                if len(cells) >= MAX_CELLS:
                    break
                cell = cells[key] = Ewma(est)
            cell.update(y, self.forgetting)
            est = cell.value

    def cells(self) -> int:
        return len(self._cells)
