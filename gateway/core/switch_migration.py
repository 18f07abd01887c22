"""Pure price of a shared GPU's regime switch with live migration (`SPECGATE_MIGRATION`): what a switch costs when
the leaving server's movable requests are moved to the arriving one instead of co-running there (`gateway.migrate`
plans the moves; `gateway.core.regime.switch_price` prices the rest). Why and what was measured: docs/routing.md."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from gateway.core.costmodel import NO_STALL, Role, Stall, StepModel
from gateway.core.regime import SwitchPrice, switch_price


class MovePlan(NamedTuple):
    """What live migration would move on a switch now (`gateway.migrate.Migrator.plan`)."""

    moved: int  # running requests it would move
    reprefill_s: float  # their summed prefill again on the arriving server
    extra_s: float  # what moving costs them (`gateway.core.migration.move_extra_s`), summed


NO_MOVES = MovePlan(0, 0.0, 0.0)


def net_switch_price(left: Sequence[float], plan: MovePlan, models: Mapping[Role, StepModel],
                     interference: Mapping[Role, float], to: Role, arriving_load: float, gain_s: float,
                     free_drain_s: float, stall: Stall = NO_STALL) -> SwitchPrice:
    """`switch_price` with live migration: a switch is also free when what would stay after the moves
    (`after_migration`) drains within `free_drain_s` and the moves pay for themselves (the stayers' co-running plus
    what the moved ones cost, their prefill again, which `to`'s requests stall through, and their own slowdown, is
    below the gain); that net price is returned then. Otherwise the whole price, as without migration: a paid switch
    must pay with every running request co-running (migration then only makes it cheaper than priced). Seen with
    the net price used for paid switches too: on a generated trace (family member 42) a switch 5 decisions in,
    priced at 0.97 s net against a gain of 1.67 s, co-ran with 1 s of structured requests that cannot move and cost
    ~3 s; and a net price with only the stayers' drain as drain (bursty) took a switch as free that moved two
    requests which then ran 0.3-0.4 s slower on the arriving server. Even so, free switches this rule took cost 10%
    and 24% of a trace inside busy phases (members 45 and 53: priced 0.35 s, measured ~18 s), so the router uses it
    only with SPECGATE_REGIME_MIGRATION_FREE_SWITCH."""
    whole = switch_price(left, models, interference, to, arriving_load, gain_s, stall=stall)
    if plan.moved <= 0:
        return whole
    stay = after_migration(left, plan.moved)
    net = switch_price(stay, models, interference, to, arriving_load, gain_s, reprefill_s=plan.reprefill_s,
                       moved_extra_s=plan.extra_s, stall=stall)
    return net if max(stay, default=0.0) <= free_drain_s and net.cost_s < gain_s else whole


def after_migration(left: Sequence[float], moved: int) -> list[float]:
    """The leaving server's requests that stay when live migration moves `moved` of them (`SPECGATE_MIGRATION`):
    `left` less its `moved` longest (the movers are the long ones: a request moves when it ends sooner moved than
    left to co-run, `gateway.core.migration.moving_pays`; requests that cannot move are not counted in `moved`).
    With migration, a switch co-runs the two servers only while these drain, and the price of the others is what
    moving costs (`net_switch_price`)."""
    if moved <= 0:
        return list(left)
    return sorted(left)[:max(len(left) - moved, 0)]
