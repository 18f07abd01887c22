"""Pure regime choice for a GPU shared by a baseline and a speculative server.

Two servers that time-share one GPU slow each other, so the best a router can do there is to let one of them
carry the group's traffic. Which one depends on the mix and the load, not on the request at hand: per request, the
idle server looks expensive for every request (sticky), locking in whichever server the first requests chose.

The regime is decided from the group's recent requests instead: each one's cost (latency plus the delay it imposes
on the requests running with it) with the group's load at its decision carried by the baseline alone, against the
speculative server alone. The regime enters speculation above 1 + `switch_margin`, leaves it below
1 / (1 + `leave_margin`), once held `min_dwell_s` seconds (at once past the `decisive_margin`): hysteresis.

A switch has a price: the old server's running requests keep running, and every new request on the other server
time-shares the GPU with them until they drain. That price grows with the old server's load, highest exactly when
a burst makes the mix look expensive on it (two switches inside one burst: 1.32x either static). So a switch is
*pending*, and is taken only when it is (nearly) free or pays for itself, both priced by the cost model
(`switch_price`): when the leaving server's running requests are predicted to finish within `free_drain_s`, or when
the mix's predicted saving beyond the band, over the requests of the next `min_dwell_s` seconds (the regime holds
that long anyway), exceeds the predicted cost of co-running the two servers while the old one drains. The dwell is
in seconds, not decisions. Evidence and hope (`SPECGATE_REGIME_EVIDENCE`) and the load cap: docs/routing.md.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple, TypeVar

from gateway.core.costmodel import NO_STALL, OTHER_ROLE, Role, Stall, StepModel


@dataclass(frozen=True, slots=True)
class RegimeConfig:
    switch_margin: float
    min_dwell_s: float  # seconds a regime holds at least (and the horizon a switch's gain is counted over)
    externality_weight: float
    decisive_margin: float  # a ratio this far outside 1 asks for a switch without waiting for the dwell
    free_drain_s: float  # a pending switch is free when the leaving server's requests finish within this
    switch_cost_factor: float  # ... or pays when its gain exceeds this many times its predicted co-running cost
    speculation_max_load: float  # no speculative regime while the group's recent mean load is above this
    trial_max_load: float = math.inf  # hope alone starts a free trial only while the load it commits is at most this
    trial_min_observations: int = 8  # a trial is judged on at least this many acceptance observations of its own
    leave_margin: float = 0.05  # a speculative regime stays while the mix reads at least 1 / (1 + this) (Settings: 0)
    enter_cost_factor: float = 1.0  # entering speculation (not a trial) needs its gain past this many times its cost


@dataclass(frozen=True, slots=True)
class RegimeState:
    role: Role = "baseline"
    since_s: float = -math.inf  # when the last switch happened (none yet: free to switch)
    ratio: float | None = None  # the last mix ratio: cost on the baseline / on the speculative server
    switches: int = 0
    pending: Role | None = None  # the role the mix asks for, waiting until the switch is free or pays
    pending_since_s: float = 0.0
    trial: bool = False  # the role was started on hope, not evidence: it ends as soon as the evidence says so
    pending_trial: bool = False  # the pending switch is asked for on hope alone (taken only free and light)
    evidence: float | None = None  # the last mix ratio at the posterior means (`ratio` is as hoped)
    lead: float = 0.0  # the hope's lead over the evidence entering speculation must outlast (`next_regime`)
    observed: int = 0  # the speculative server's acceptance observations so far, as of the last recomputation
    trial_observed: int = 0  # ... when the trial started
    trial_failed: bool = False  # the last trial ended unborne out: no other on hope alone (until a switch on evidence)


class MixSample(NamedTuple):
    """One recent request of the group, with the current estimates for it (a tuple: the mix builds one per
    recent request on every recomputation, and a frozen dataclass costs twice as much to build)."""

    prompt_tokens: int
    output_tokens: float
    tokens_per_step: float  # as judged: the posterior mean, plus optimism while unmeasured (the hope)
    load: float  # the group's requests running + waiting at its decision
    mean_tokens_per_step: float = 0.0  # the posterior mean alone (the evidence; 0: as judged)


def mix_ratio(samples: Sequence[MixSample], models: Mapping[Role, StepModel], prefill: Mapping[Role, float],
              externality_weight: float, stall: Stall = NO_STALL) -> float | None:
    """Σ cost with the baseline alone / Σ cost with the speculative server alone (> 1: speculation pays)."""
    if not samples:
        return None
    return ratio_of(mix_costs(samples, models, prefill, externality_weight, stall=stall))


def ratio_of(totals: Mapping[Role, float]) -> float:
    """The mix ratio of `mix_costs`' totals."""
    return totals["baseline"] / max(totals["speculative"], 1e-12)


def mix_costs(samples: Sequence[MixSample], models: Mapping[Role, StepModel], prefill: Mapping[Role, float],
              externality_weight: float, *, evidence: bool = False, stall: Stall = NO_STALL) -> dict[Role, float]:
    """Σ predicted cost of the samples with each role alone carrying them (no co-runners): per sample,
    `predict(...).cost(w)` = prefill · P + (steps + 1) · (base + per_request · (L + 1) + w · per_request · L + X),
    with steps = (O − 1) / T and X = `stall.step_s(L)`, the others' prefill each step carries on a saturated GPU,
    the same on either server (so there a request costs its steps). That is linear in P, in (steps + 1), in
    (steps + 1) · L and in (steps + 1) · X, so the loop only sums those and the models enter once (the regime
    recomputes this over its whole window every few decisions). With `evidence`, each sample at its mean tokens per
    step (no optimism)."""
    prompts = base_steps = base_steps_load = spec_steps = spec_steps_load = base_stall = spec_stall = 0.0
    for s in samples:
        load = s.load
        rest = s.output_tokens - 1.0 if s.output_tokens > 1.0 else 0.0
        tps = s.mean_tokens_per_step if evidence and s.mean_tokens_per_step > 0 else s.tokens_per_step
        tps = tps if tps > 1.0 else 1.0
        prompts += s.prompt_tokens
        base_steps += rest + 1.0
        base_steps_load += (rest + 1.0) * load
        spec = rest / tps + 1.0
        spec_steps += spec
        spec_steps_load += spec * load
        if load > stall.from_load:
            x = stall.step_s(load)
            base_stall, spec_stall = base_stall + (rest + 1.0) * x, spec_stall + spec * x
    def total(role: Role, steps: float, steps_load: float, stalled: float) -> float:
        m = models[role]
        return prefill[role] * prompts + (m.base_s + m.per_request_s) * steps \
            + m.per_request_s * (1.0 + externality_weight) * steps_load + stalled

    return {"baseline": total("baseline", base_steps, base_steps_load, base_stall),
            "speculative": total("speculative", spec_steps, spec_steps_load, spec_stall)}


def evidence_ratios(samples: Sequence[MixSample], models: Mapping[Role, StepModel], prefill: Mapping[Role, float],
                    externality_weight: float, recent: int, stall: Stall = NO_STALL) -> tuple[float, float]:
    """The mix ratio at the evidence on the whole window, and the lower of it and its last `recent` requests' (the
    evidence): the window (64 requests) spans 14 s at 4.5 requests/s and the whole of a light trace, so a phase
    whose mix favours the baseline showed in it 10 s late (members 6 and 10 of the family: 1.04x and 1.08x, the
    loss all after the phase change). The lower of the two is conservative toward the baseline, whose cost does not
    hang on an acceptance estimate: speculation must pay on both the window and its recent requests to be asked
    for, or to stay."""
    whole = ratio_of(mix_costs(samples, models, prefill, externality_weight, evidence=True, stall=stall))
    if recent <= 0 or len(samples) <= recent:
        return whole, whole
    last = mix_costs(samples[-recent:], models, prefill, externality_weight, evidence=True, stall=stall)
    return whole, min(whole, ratio_of(last))


K = TypeVar("K", bound=Hashable)


def mix_summary(samples: Sequence[MixSample], models: Mapping[Role, StepModel], prefill: Mapping[Role, float],
                externality_weight: float) -> dict[str, float] | None:
    """What a mix ratio is computed from (`/admin/state`): the window's summed cost with each server alone, and its
    mean prompt, expected output, tokens per step as judged (optimism included, with p10 and p90) and load."""
    if not samples:
        return None
    n = len(samples)
    costs = mix_costs(samples, models, prefill, externality_weight)
    tps = sorted(s.tokens_per_step for s in samples)
    return {"requests": n, "baseline_cost_s": costs["baseline"], "speculative_cost_s": costs["speculative"],
            "tokens_per_step_p10": tps[n // 10], "tokens_per_step_p90": tps[(9 * n) // 10],
            "prompt_tokens": sum(s.prompt_tokens for s in samples) / n,
            "output_tokens": sum(s.output_tokens for s in samples) / n,
            "tokens_per_step": sum(s.tokens_per_step for s in samples) / n,
            "load": sum(s.load for s in samples) / n}


def worth_probing(samples: Sequence[MixSample], keys: Sequence[K], hopes: Mapping[K, float],
                  models: Mapping[Role, StepModel], totals: Mapping[Role, float], externality_weight: float,
                  threshold: float) -> frozenset[K]:
    """The keys (classes) whose requests, at the acceptance `hopes[key]` instead of their estimate, would take the
    mix ratio past `threshold`: where a probe's answer could move the regime. A class too rare in the mix to do
    that gains nothing from a probe, and on a shared GPU a probe slows the requests that arrive while it runs
    (creative-heavy: each probe of a structured class cost ~1 s over its neighbours, 1-2% of the run, with the
    mix at 0.8x). `samples[i]` is of class `keys[i]`; `totals` is `mix_costs` of the samples."""
    if not samples:
        return frozenset()
    spec = models["speculative"]
    step, growth = spec.base_s + spec.per_request_s, spec.per_request_s * (1.0 + externality_weight)
    gain: dict[K, float] = {}  # per key: Σ speculative cost at its estimate − at its hope
    for s, key in zip(samples, keys, strict=True):
        hope = hopes.get(key)
        if hope is None or hope <= s.tokens_per_step:
            continue
        rest = s.output_tokens - 1.0 if s.output_tokens > 1.0 else 0.0
        saved_steps = rest / max(s.tokens_per_step, 1.0) - rest / hope
        gain[key] = gain.get(key, 0.0) + saved_steps * (step + growth * s.load)
    base = totals["baseline"]
    return frozenset(k for k, g in gain.items() if base / max(totals["speculative"] - g, 1e-12) > threshold)


def capped_ratio(ratio: float | None, mean_load: float, cfg: RegimeConfig, saturated: bool = False) -> float | None:
    """The mix ratio as the regime may act on it: above `speculation_max_load` requests on the GPU the batch is
    already large (speculation verifies drafts the batch has no room for), so the ratio cannot ask for the
    speculative server (`leave_large_batch` takes a speculative regime out at once). The step models
    are least reliable there (prefill chunks of a busy queue run inside the steps, and both roles' fits drifted
    on mixed-high: the regime went speculative at 40 requests running and cost 1.9x). vLLM's V0 engine had the
    same guard as `--speculative-disable-by-batch-size`. Not while the GPU is `saturated` (`saturation`)."""
    if ratio is None or mean_load <= cfg.speculation_max_load or saturated:
        return ratio
    return min(ratio, 1.0 / (1.0 + cfg.switch_margin) - 1e-9)


def leave_large_batch(state: RegimeState, mean_load: float, now: float, cfg: RegimeConfig, saturated: bool = False,
                      ) -> RegimeState:
    """A speculative regime under a load above `speculation_max_load` leaves at once: waiting for a lull that
    sustained load never brings kept 78 more requests on the n-gram server at c = 48 (an emulated replay of the
    H200 run: 1.9 s against 1.4 s all-baseline). The one switch that is not priced: above the cap the step models
    are not trusted to price it. Not while the GPU is `saturated` by prompts (`saturation`): the mix decides."""
    if state.role != "speculative" or mean_load <= cfg.speculation_max_load or saturated:
        return state
    return RegimeState("baseline", now, state.ratio, state.switches + 1)


def next_regime(state: RegimeState, ratio: float | None, now: float, cfg: RegimeConfig,
                evidence: float | None = None, observed: int = 0, lead: float | None = None,
                surging: bool = False) -> RegimeState:
    """The regime at time `now` (seconds), given the latest mix ratio as hoped (`ratio`) and as measured
    (`evidence`; None: the same): the same role, with a switch pending when the evidence leaves the band after the
    dwell of `min_dwell_s` (or, the hope too, the decisive band at any time), a trial of speculation pending when only
    the hope does, a trial's end pending at once when its evidence has not risen past the band (judged on
    `trial_min_observations` of the speculative server's acceptance observations since it started: `observed` counts
    them; before any, the evidence is the prior that hope alone had already overruled), and no switch pending once the
    ratio is back inside the band. `settle` takes a pending switch. `lead`: the hope's lead over the evidence on one
    window (the classes' uncertainty; None: `ratio` less `evidence`, which may be lowered to its recent requests).
    `surging`: the evidence is priced at a surge of arrivals (`core.surge`); a leave it asks for does not wait for
    the dwell (a flood that follows an entry is no swing of a few answers)."""
    if ratio is None:
        return state
    ev, state = ratio if evidence is None else evidence, replace(state, observed=max(observed, state.observed))
    if state.trial and ev > 1.0 + cfg.switch_margin:
        state = replace(state, trial=False)  # the evidence confirms the trial: a regime like any other
    wanted: Role | None = None
    decisive = trial = False
    judged = state.observed - state.trial_observed >= cfg.trial_min_observations
    hoped = ratio > 1.0 + cfg.switch_margin and not state.trial_failed  # a failed trial tested hope: evidence enters
    ahead = max(ratio - ev if lead is None else lead, 0.0)
    sure = ev > 1.0 + cfg.switch_margin and ev - ahead > 1.0  # past the band less the hope's lead
    if state.role == "baseline" and (sure or hoped):  # hope past the band and evidence not sure: a trial, whether the
        wanted, trial = "speculative", not sure  # evidence is inside the band or above it (better never bars it)
        # with evidence, speculation is entered after the dwell (the evidence swings: 1.17, then 0.87 a decision
        # later), and only while the evidence less the hope's lead over it (the classes' uncertainty) reads it cheaper
        decisive = evidence is None and ev > 1.0 + cfg.decisive_margin
    elif state.role == "speculative" and state.trial and not judged:
        pass  # its evidence is still the prior that hope overruled
    elif state.role == "speculative" and state.trial:  # judged, not confirmed (above): a tie does not keep it
        wanted, decisive = "baseline", True  # (code 1800:60 held one up to 88 decisions at 0.97-1.03: up to 1.050x)
    elif state.role == "speculative" and ev < 1.0 / (1.0 + cfg.leave_margin):
        # before the dwell, only while the hope too reads it past the decisive band: a few answers swing the evidence
        # (the demo's: 1.09 at 4 answers, 0.89 at 9, 1.0 at 12); under load the hope is the evidence
        wanted, decisive = "baseline", surging or max(ev, ratio) < 1.0 / (1.0 + cfg.decisive_margin)
    if wanted is None or not (decisive or now - state.since_s >= cfg.min_dwell_s):
        return replace(state, ratio=ratio, evidence=ev, lead=ahead, pending=None, pending_trial=False)
    since = state.pending_since_s if state.pending == wanted else now
    return replace(state, ratio=ratio, evidence=ev, lead=ahead, pending=wanted, pending_since_s=since,
                   pending_trial=trial)


@dataclass(slots=True)
class Running:
    """A request sent to a shared GPU's server: when, its predicted end-to-end time, and whether it has ended."""

    sent_s: float
    e2e_s: float
    done: bool = False  # set when it ends: an over-predicted request (19 s for 1.2) priced a 19-s drain for 19 s


REMAINING_FLOOR = 0.1  # a request past its predicted end is taken to have this share of its prediction left


def remaining(running: Sequence[Running], count: int, now: float) -> list[float]:
    """Predicted seconds left of the `count` requests the leaving server still runs: of those this process sent
    there and not done, the `count` predicted to end last (the others are taken to have finished); one running past its
    prediction has `REMAINING_FLOOR` of it left, and requests beyond those sent (another gateway's) the mean."""
    left = sorted((max(r.sent_s + r.e2e_s - now, REMAINING_FLOOR * r.e2e_s) for r in running if not r.done),
                  reverse=True)
    mean = sum(r.e2e_s for r in running) / len(running) if running else 0.0
    return left[:count] + [mean] * max(count - len(left), 0)


class SwitchPrice(NamedTuple):
    """What switching now would cost and gain, in summed seconds of latency."""

    drain_s: float  # until the leaving server's running requests are predicted to end
    cost_s: float  # the co-running both servers' requests suffer meanwhile
    gain_s: float  # the mix's saving beyond the band over the requests of the next `min_dwell_s`
    arriving_load: float = 0.0  # the load the arriving server will carry (Little's law; inf: the rate is unknown)
    cold_cache_s: float = 0.0  # of `cost_s`: the prefixes the arriving server would prefill again (`switch_cache`)


def switch_gain(totals: Mapping[Role, float], samples: int, to: Role, requests: float, margin: float) -> float:
    """The predicted saving of moving the group's traffic to `to` over `requests` requests (the window's `samples`
    while the arrival rate is unknown): per request, the mix's cost on the leaving server less its cost on `to`
    raised by the band (the model's error on a near tie), never below 0."""
    if samples <= 0:
        return 0.0
    per = (totals[OTHER_ROLE[to]] - (1.0 + margin) * totals[to]) / samples
    return max(per, 0.0) * (requests if math.isfinite(requests) else float(samples))


def switch_horizon(state: RegimeState, now: float, cfg: RegimeConfig) -> float:
    """The seconds a pending switch's gain is counted over: the dwell the new regime holds anyway, or as long as
    the mix has asked for the switch, if longer (a mix that has asked for T seconds is likely to go on as long)."""
    if state.pending is None:
        return cfg.min_dwell_s
    return max(cfg.min_dwell_s, now - state.pending_since_s)


# A switch's co-running is priced at strict alternation (κ = 1 both ways, the bound of time-sharing), not at the
# learned κ: κ is learned where steps are shared at all, mostly at light load, and the baseline's stays near its
# prior 0.2; a switch co-runs under load. Member 22 of the family (seed 3) paid a switch inside a 14 requests/s
# burst priced at 11.1 s with the learned κ against a gain of 13.7 s; it cost 38 s over the next 5 s (κ = 1 adds
# four times the baseline's term, which at the group's load of ~15 requests is over 2.6 s: above the gain).
SWITCH_INTERFERENCE: Mapping[Role, float] = {"baseline": 1.0, "speculative": 1.0}


def switch_price(left: Sequence[float], models: Mapping[Role, StepModel], interference: Mapping[Role, float],
                 to: Role, arriving_load: float, gain_s: float, *, reprefill_s: float = 0.0,
                 moved_extra_s: float = 0.0, stall: Stall = NO_STALL) -> SwitchPrice:
    """The cost model's price of switching the GPU to `to` now. The leaving server's requests, with `left` seconds
    to go, each stretch by κ_leaving · own_to(L) / own_leaving(its load) while `to` runs its L requests; those
    L requests each stretch by κ_to · own_leaving(mean load while draining) / own_to(L) for the drain (its
    longest request). `arriving_load`: the load `to` will carry (the router: the group's arrival rate times a
    request's cost there, by Little's law, or its recent mean load if more; infinite while the rate is unknown).
    With live migration (`net_switch_price`; `left` is then only the requests that stay): `reprefill_s`, the summed
    prefill on `to` of the requests that move there, which `to`'s L requests stall through (a bound: chunked prefill
    shares the steps), and `moved_extra_s`, what moving costs the moved requests themselves
    (`gateway.core.migration.move_extra_s`: their prefill again and their pace on `to`). On a GPU saturated by
    prompts each step of either server also carries `stall` at the GPU's load: the two servers' steps are then alike,
    and each side's requests wait about a step of the other's for each of their own (c1 of the code burst took a
    switch at 105 requests priced 218 s without it, against a 902-s gain, and lost ~1,000 s: 1.19x the baseline)."""
    moved_cost = moved_extra_s + (reprefill_s * max(arriving_load, 1.0) if reprefill_s > 0.0 else 0.0)
    if not left:
        return SwitchPrice(0.0, moved_cost, gain_s, arriving_load)
    leaving, drain, total = OTHER_ROLE[to], max(left), sum(left)
    if not math.isfinite(arriving_load):  # the arrival rate is not known yet: it may be a flood
        return SwitchPrice(drain, math.inf, gain_s, arriving_load)
    own_leaving, own_to, load_to = models[leaving], models[to], max(arriving_load, 1.0)
    x = stall.step_s(len(left) + load_to)
    step_to = own_to.own_s(load_to) + x
    cost = moved_cost + total * interference[leaving] * step_to / (own_leaving.own_s(len(left)) + x)
    if drain > 0:
        cost += load_to * drain * interference[to] * (own_leaving.own_s(total / drain) + x) / step_to
    return SwitchPrice(drain, cost, gain_s, arriving_load)


def settle(state: RegimeState, now: float, price: SwitchPrice, cfg: RegimeConfig, mean_load: float = 0.0,
           saturated: bool = False) -> RegimeState:
    """Take a pending switch when it is (nearly) free (the leaving server drains within `free_drain_s`, and the gain
    covers its priced co-running: bursty with the shadow on took a 0.26-s drain priced 1.99 s against a 0.42-s gain
    into a burst, and its next 60 requests ran 10-18% slower than the static server) or when its gain exceeds its
    price times `switch_cost_factor` (the linear co-running model misses the queue a burst builds behind the lost
    capacity); else it stays pending, re-priced at the next decision. A trial asked for on hope alone starts only on
    an idle GPU (nothing running on the leaving server) and while the load it commits is at most `trial_max_load`:
    neither paid by its hoped gain nor on a short drain (a real H100 pair took one 4 decisions in, paid, and later
    one on a drain predicted 0.16 s that ran ~1 s; each made the light phase 1.13-1.17x either server alone).
    Speculation is entered only where the gain covers its co-running `enter_cost_factor` times (why: settings)."""
    if state.pending is None or (not saturated and _over_the_cap(state.pending, mean_load, price.arriving_load, cfg)):
        return state
    if state.pending_trial:  # a bet on hope alone: only where nothing runs to co-run with it, there or back
        light = price.arriving_load <= cfg.trial_max_load or not math.isfinite(price.arriving_load)
        take = price.drain_s <= 0.0 and light
    else:
        enter = cfg.enter_cost_factor if state.pending == "speculative" else 1.0
        free = price.drain_s <= cfg.free_drain_s and enter * price.cost_s <= price.gain_s
        paid = price.gain_s > max(cfg.switch_cost_factor, enter) * price.cost_s
        take = state.trial or paid or free
    if take:
        return RegimeState(state.pending, now, state.ratio, state.switches + 1, trial=state.pending_trial,
                           evidence=state.evidence, lead=state.lead, observed=state.observed,
                           trial_observed=state.observed, trial_failed=state.trial and state.pending == "baseline")
    return state


def _over_the_cap(to: Role, mean_load: float, arriving_load: float, cfg: RegimeConfig) -> bool:
    """Speculation is not entered at a load (the GPU's recent mean, or Little's for the arriving server if more and
    known) at which `leave_large_batch` would leave it at once: member 132 of the family did, 1.46x over the trace
    (`settle`'s `saturated`: not on a GPU saturated by prompts, where that rule does not leave it either)."""
    arriving = arriving_load if math.isfinite(arriving_load) else 0.0
    return to == "speculative" and max(mean_load, arriving) > cfg.speculation_max_load


def follow_fleet(state: RegimeState, ratio: float | None, carried: Role | None, now: float,
                 band: float) -> RegimeState:
    """Replicas agree on a regime: when the group's own servers show the other role carrying the GPU (other
    gateways send it their traffic) and this process's evidence is not decisive (its mix ratio within the band
    `1 ± band`), join them. Without this, N replicas each decide from a 1/N share of the evidence and often
    disagree, and the two servers alternate on the GPU, which is what a regime exists to prevent."""
    if carried is None or carried == state.role or ratio is None:
        return state
    if 1.0 / (1.0 + band) <= ratio <= 1.0 + band:
        return RegimeState(carried, now, ratio, state.switches + 1)
    return state
