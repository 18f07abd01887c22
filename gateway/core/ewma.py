"""An exponentially forgetting weighted mean and variance: the learner's and the output-length predictor's cell."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class Ewma:
    """Exponentially forgetting weighted mean (and variance)."""

    value: float
    weight: float = 0.0
    count: int = 0
    var: float = 0.0

    def update(self, x: float, forgetting: float, w: float = 1.0) -> None:
        self.weight = self.weight * forgetting + w
        delta = x - self.value
        self.value += delta * (w / self.weight)
        self.var = (1.0 - w / self.weight) * (self.var + delta * delta * (w / self.weight))
        self.count += 1

    def shrunk(self, prior: float, prior_weight: float) -> float:
        """The mean pulled toward `prior` as if it had `prior_weight` observations."""
        total = self.weight + prior_weight
        if total <= 0:
            return prior
        return (self.value * self.weight + prior * prior_weight) / total
