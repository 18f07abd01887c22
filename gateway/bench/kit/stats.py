"""One percentile, with the method named at each call."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, assert_never

Method = Literal["linear", "nearest_rank", "floor_index"]


def percentile(values: Sequence[float], q: float, method: Method = "linear") -> float | None:
    """The q-th percentile (q in 0..100) of `values`; None for no values.

    `linear` interpolates between the two closest ranks (numpy's default); `nearest_rank` is the smallest value
    with at least q% of the values at or below it; `floor_index` is the value at index floor(q/100 · n)."""
    if not values:
        return None
    ordered = sorted(values)
    n = len(ordered)
    if method == "linear":
        pos = (n - 1) * q / 100.0
        lo, hi = math.floor(pos), math.ceil(pos)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)
    if method == "nearest_rank":
        return ordered[min(max(1, math.ceil(q / 100 * n)), n) - 1]
    if method == "floor_index":
        return ordered[min(n - 1, int(q / 100 * n))]
    assert_never(method)
