"""A shared GPU group's arrival rate, from its recent decision times (pure: the caller reads the clock)."""

from __future__ import annotations

import math
from collections.abc import Sequence

RATE_MIN_ARRIVALS = 4  # a group's arrival rate is unknown (infinite to the policy) before this many decisions


def arrival_rate(times: Sequence[float], now: float) -> float:
    """Requests per second over the recent decision times, counting the quiet time since the last one."""
    if len(times) < 2:
        return 0.0
    return (len(times) - 1) / max(now - times[0], 1e-3)


def known_rate(times: Sequence[float], now: float) -> float:
    """The policy's view of a group's arrival rate: infinite until `RATE_MIN_ARRIVALS` decisions are known, so
    that no probe or regime exception is sent into the first seconds of what may be a flood (one probe at the
    second request of a 35 requests/s start slowed the whole run 16%)."""
    return arrival_rate(times, now) if len(times) >= RATE_MIN_ARRIVALS else math.inf
