"""Calibration of shadow lookup reads (`core.shadow_lookup`) against the speculative server's own, and the book of
what the shadow read per class (for /admin/state and the decision logs).

A shadow read can be biased against the real server: its tokenizer is a stand-in, and a server may thin sampled
acceptance in ways the text does not show. Per temperature bucket the calibration learns how much of the shadow's gain
over one token a step the server really measured, from responses the speculative server itself served (the shadow is
replayed on those too): the ratio of the forgetting means of the two gains, weighted by the response's steps, shrunk
toward a default (greedy, sampled) as if by `prior_weight` responses. A calibrated read is 1 + ratio × (shadow − 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from gateway.core.ewma import Ewma

MAX_RATIO = 2.0
MIN_GAIN = 0.02  # a calibration pair whose shadow saw less gain than this says nothing about the ratio


@dataclass(slots=True)
class _Pair:
    measured: Ewma = field(default_factory=lambda: Ewma(0.0))  # gain over one token a step
    shadow: Ewma = field(default_factory=lambda: Ewma(0.0))


class ShadowCalibration:
    def __init__(self, default_ratio: float, prior_weight: float, forgetting: float,
                 default_ratio_sampled: float | None = None) -> None:
        self.default_ratio = default_ratio  # greedy
        self.default_ratio_sampled = default_ratio if default_ratio_sampled is None else default_ratio_sampled
        self.prior_weight = prior_weight
        self.forgetting = forgetting
        self._pairs: dict[str, _Pair] = {}
        # per (class, bucket): the shadow's raw tokens per step and its calibrated read
        self._reads: dict[tuple[str, str], tuple[Ewma, Ewma]] = {}

    def default(self, bucket: str) -> float:
        return self.default_ratio if bucket == "greedy" else self.default_ratio_sampled

    def ratio(self, bucket: str) -> float:
        pair = self._pairs.get(bucket)
        default = self.default(bucket)
        if pair is None or pair.shadow.weight <= 0 or pair.shadow.value < MIN_GAIN:
            return default
        measured = min(max(pair.measured.value / pair.shadow.value, 0.0), MAX_RATIO)
        w = pair.shadow.weight
        return (measured * w + default * self.prior_weight) / (w + self.prior_weight)

    def calibrated(self, bucket: str, shadow_tps: float) -> float:
        return 1.0 + self.ratio(bucket) * max(shadow_tps - 1.0, 0.0)

    def observe(self, bucket: str, measured_tps: float, shadow_tps: float, steps: int) -> None:
        """A speculative response: the server measured `measured_tps` where the shadow read `shadow_tps`."""
        if steps <= 0 or not (math.isfinite(measured_tps) and math.isfinite(shadow_tps)):
            return
        w = min(steps / 16.0, 1.0)
        pair = self._pairs.setdefault(bucket, _Pair())
        pair.measured.update(max(measured_tps - 1.0, 0.0), self.forgetting, w)
        pair.shadow.update(max(shadow_tps - 1.0, 0.0), self.forgetting, w)

    def record(self, task_class: str, bucket: str, shadow_tps: float, calibrated_tps: float) -> None:
        """What the shadow read for a response of (class, bucket), raw and calibrated."""
        raw, cal = self._reads.setdefault((task_class, bucket), (Ewma(1.0), Ewma(1.0)))
        raw.update(shadow_tps, self.forgetting)
        cal.update(calibrated_tps, self.forgetting)

    def state(self) -> dict[str, object]:
        return {
            "calibration": {
                bucket: {"ratio": round(self.ratio(bucket), 4), "measured_gain": round(p.measured.value, 4),
                         "shadow_gain": round(p.shadow.value, 4), "responses": p.shadow.count}
                for bucket, p in sorted(self._pairs.items())
            },
            "default_ratio": {"greedy": self.default_ratio, "sampled": self.default_ratio_sampled},
            "classes": {
                f"{c}/{b}": {"shadow_tokens_per_step": round(raw.value, 4),
                             "calibrated_tokens_per_step": round(cal.value, 4), "reads": raw.count}
                for (c, b), (raw, cal) in sorted(self._reads.items())
            },
        }
