"""Pure calibration of the per-request acceptance estimate on the requests it sent to a speculative server.

The per-request estimate (`acceptance_cells`) sends a request to a speculative server when it reads high, so the
requests that go there are the ones it over-reads (the winner's curse), and a cell holding two short answers that
copied reads the long answers of its kind as copying too. Measured on the gateway logs of the 2 + 2 fleets
(results/fleet-peers-2026-12-06-j): on azure-conv-a the speculative servers' requests took 1.19x the decode steps
their estimate predicted for the tokens they delivered (the conversations classed "code": 1.35x; 400-token answers
read at 1.9-2.3 tokens a step ran at 1.05-1.26, 1.3-1.4 s each over their prediction, ~2.4% of the cell's mean),
on azure-code-a 1.16-1.19x (code 1.30-1.40x, structured 0.90-0.95x); the few requests sent to learn (probes), which
the estimate did not pick, read 0.96-1.09x.

So per class a ratio of sums learns Σ decode steps taken / Σ decode steps the raw estimate predicted for the tokens
delivered (long answers weigh most: the cost is in their steps), shrunk toward the same ratio over all classes and
that toward 1 (`SHRINK` responses each); the decision divides its estimate by it (`calibrated`). It learns from the
raw estimate (what the cells said before this correction), so it converges to the bias of the requests it routes
instead of cancelling itself, and only from requests routed on a prediction (not probes or shadows).
"""

from __future__ import annotations

from gateway.core.acceptance_cells import RatioCell

SHRINK = 4.0  # a class's ratio counts as this many responses of all classes'; all classes' as this many at 1
MAX_FACTOR = 2.0  # the correction is bounded either way
MAX_CLASSES = 256  # classes with a ratio of their own (the classifier's are far fewer: a bound, not a setting)


class Calibration:
    def __init__(self, forgetting: float) -> None:
        self.forgetting = forgetting
        # each a ratio of sums: steps taken over steps predicted (`RatioCell` of taken / predicted, by predicted)
        self._all = RatioCell()
        self._classes: dict[str, RatioCell] = {}

    def factor(self, task_class: str) -> float:
        """Decode steps taken per decode step predicted, for this class (1: none observed)."""
        overall = self._all.shrunk(1.0, SHRINK)
        cell = self._classes.get(task_class)
        value = overall if cell is None else cell.shrunk(overall, SHRINK)
        return min(max(value, 1.0 / MAX_FACTOR), MAX_FACTOR)

    def calibrated(self, task_class: str, tokens_per_step: float, most: float) -> float:
        """The estimate corrected by what such estimates delivered: `tokens_per_step` over the factor, in [1, most]."""
        return min(max(tokens_per_step / self.factor(task_class), 1.0), max(most, 1.0))

    def observe(self, task_class: str, decode_tokens: float, decode_steps: float, predicted: float) -> None:
        """A speculative response routed on an estimate of `predicted` tokens per decode step (the raw one)."""
        if decode_steps <= 0 or decode_tokens <= 0 or not predicted >= 1.0:
            return
        expected = decode_tokens / predicted
        ratio = decode_steps / expected
        self._all.update(ratio, expected, 1.0, self.forgetting)
        if task_class in self._classes or len(self._classes) < MAX_CLASSES:
            self._classes.setdefault(task_class, RatioCell()).update(ratio, expected, 1.0, self.forgetting)
