"""Pure view of a shared GPU group's mix at a surge of arrivals: the load the recent arrival rate will build.

The regime's mix prices each recent request at the load it met at its decision, and its arrival rate is the
window's (64 requests). At a flood's onset both lag: on fresh member 907 of the family (2 requests/s, then 13-15
requests/s from 25 s) the window read 2.3 requests/s and a load of 1.5-2.5 a second into the flood, its mix still
favoured the speculative regime it was in, and the leave it finally took at 34.5 s (the load by then 13) came
after the flood's worst 10 s (29 s summed over the better static). When the last `recent` arrivals come at more
than `SURGE_FACTOR` times the window's rate, the mix is priced again at the load Little's law gives at that rate
(the rate times a request's cost on the current server), each request at least at that load: what the GPU will
carry over the next seconds if the rate holds. The regime moves on the lower of it and the measured evidence. Only
in a speculative regime: a baseline regime's surge only makes the baseline more right."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from gateway.core.arrivals import arrival_rate
from gateway.core.domain import Role
from gateway.core.regime import MixSample, ratio_of

SURGE_FACTOR = 2.0  # the recent arrival rate over the window's that counts as a surge


class Surge(NamedTuple):
    rate: float  # requests per second over the recent arrivals
    load: float  # the load that rate builds (Little's law)


def recent_rate(times: Sequence[float], now: float, recent: int) -> float:
    """`arrivals.arrival_rate` over the last `recent` decision times (0: fewer known)."""
    if recent < 2 or len(times) < recent:
        return 0.0
    return arrival_rate(list(times)[len(times) - recent:], now)


def surge(times: Sequence[float], now: float, recent: int, per_request_s: float) -> Surge | None:
    """The surge the group's arrivals show (None: none): the last `recent` arrivals' rate above `SURGE_FACTOR`
    times the whole window's, and the load it builds at `per_request_s` a request."""
    fast = recent_rate(times, now, recent)
    if fast <= 0.0 or len(times) <= recent or fast <= SURGE_FACTOR * arrival_rate(times, now):
        return None
    return Surge(fast, fast * per_request_s)


def at_load(samples: Sequence[MixSample], load: float) -> list[MixSample]:
    """The samples, each at `load` at least."""
    return [s._replace(load=load) if s.load < load else s for s in samples]


def surge_costs(samples: Sequence[MixSample], load: float, recent: int,
                costs: Callable[[Sequence[MixSample]], dict[Role, float]]) -> tuple[dict[Role, float], int]:
    """The mix's `costs` with each request at `load` at least, over the whole window or its last `recent` requests,
    whichever reads the lower ratio (as `regime.evidence_ratios`: a flood's own requests show it first), and how
    many requests they sum."""
    loaded = at_load(samples, load)
    cuts = [loaded, loaded[-recent:]] if 0 < recent < len(loaded) else [loaded]
    priced = [(costs(cut), len(cut)) for cut in cuts]
    return min(priced, key=lambda p: ratio_of(p[0]))
