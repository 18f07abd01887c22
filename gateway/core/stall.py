"""Whose fault a timeout is: the backend's, or the gateway's own event loop's.

A timeout on the loop (a health check's, a scrape's) fires after a span of monotonic time, but the loop may not have
run for all of it: a synchronous stretch (a CPU-heavy decode, a busy machine) delays every callback, the answer's
included. A lag monitor measures the loop's lag as the oversleep of a periodic short sleep; a timeout whose span
the loop lagged through for a comparable part is the gateway's stall, not the backend's failure.
"""

from __future__ import annotations

from typing import Final

STALL_SHARE: Final = 0.25  # a timeout counts against a backend only if the loop ran for >= 75% of it
STALLED_CHECKS_MAX: Final = 3  # health checks in a row a loop stall may excuse while another backend answers


def oversleep(asked_s: float, slept_s: float) -> float:
    """The loop's lag over one sleep of `asked_s` that took `slept_s`."""
    return max(slept_s - asked_s, 0.0)


def lag_reading(recorded_s: float, asleep_since: float, tick_s: float, now: float) -> float:
    """The loop's total lag so far: what the monitor recorded at its wakes, plus the oversleep of the sleep it is in
    (begun at `asleep_since`, of `tick_s`) up to `now`, which a stall that has just ended has not let it record yet.
    Nondecreasing in `now`; the lag over an interval is the difference of two readings."""
    return recorded_s + oversleep(tick_s, now - asleep_since)


def timeout_counts(timeout_s: float, elapsed_s: float, loop_lag_s: float) -> bool:
    """Whether a timed-out exchange (given `timeout_s`, over after `elapsed_s`, during which the loop lagged
    `loop_lag_s`) is the backend's failure: the loop ran for at least (1 - STALL_SHARE) of the timeout."""
    return elapsed_s - loop_lag_s >= (1.0 - STALL_SHARE) * timeout_s


def stall_still_excuses(stalled_in_a_row: int, another_answers: bool) -> bool:
    """Whether a backend's health check, whose timeouts a loop stall excused (`timeout_counts`), still leaves it as it
    was. A loop that lags all the time would excuse a hanging backend for ever; so after `STALLED_CHECKS_MAX` such
    checks in a row, while another backend answers its own checks through the same loop, the timeouts are the
    backend's. Where no other backend answers, the loop is the likelier culprit and the excuse holds."""
    return stalled_in_a_row < STALLED_CHECKS_MAX or not another_answers
