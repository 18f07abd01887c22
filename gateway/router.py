"""Glue between the pure core and live state: builds a `PolicyInput` from the pool, the learner and the shared GPU
groups' regimes, and keeps the state the pure functions hand back (regimes, recent mixes, the turn, random draws)."""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from gateway.backends import Backend, BackendPool
from gateway.candidates import CandidateView
from gateway.core import regime as rg
from gateway.core import switch_migration as sm
from gateway.core.acceptance_cells import family_of
from gateway.core.arrivals import RATE_MIN_ARRIVALS, known_rate
from gateway.core.classify import Features, classify, features, temperature_bucket
from gateway.core.costmodel import OTHER_ROLE, ROLES, Role
from gateway.core.learner import Learner
from gateway.core.mix_window import GroupRequest, Known, MixKey, group_request, mix_window
from gateway.core.policy import Decision, Estimates, PolicyInput, PolicyName, decide
from gateway.core.protocol import RequestView
from gateway.core.records import record
from gateway.core.regime import MixSample, RegimeState, Running, SwitchPrice
from gateway.core.saturation import still_saturated
from gateway.core.surge import surge, surge_costs
from gateway.core.switch_cache import cold_cache_cost_s, cold_prefix_tokens
from gateway.fleet_view import FleetView
from gateway.logevents import log_event
from gateway.metrics import Metrics
from gateway.settings import Settings

_log = logging.getLogger("specgate.router")
MixRatios = tuple[float | None, float | None, float | None]  # as hoped, at the evidence, the hope's lead on one window
MigrationPlan = Callable[[str, Role], sm.MovePlan]  # (group, to) -> what a switch would move (`gateway.migrate`)

REGIME_EVERY = 8  # decisions of a group between two recomputations of its mix ratio ...
REGIME_EARLY = 16  # ... after its first decisions, each of which recomputes it first (a switch is cheapest early)
# ... and at most every `regime_min_interval_s` (every eighth decision cost ~5% of a request's CPU at 1,700/s)


@dataclass(frozen=True, slots=True)
class Oracle:
    tokens_per_step: float
    output_tokens: float


@record
class Routed:
    decision: Decision
    features: Features
    task_class: str
    bucket: str
    running: Running | None  # its entry in a shared GPU's `running` (the proxy marks it done when it ends)
    # `FleetView`: backends without the model, the learner's class, cached prompt tokens, the prompt's family
    off_model: frozenset[Backend] = frozenset()
    learner_class: str = ""
    cached_tokens: Mapping[str, int] = field(default_factory=dict)
    family: int | None = None


def load_oracle(path: Path | None) -> dict[str, Oracle]:
    raw = json.loads(path.read_text()) if path is not None else {}
    return {rid: Oracle(float(v["tokens_per_step"]), float(v["output_tokens"])) for rid, v in raw.items()}


class Router:
    def __init__(self, settings: Settings, pool: BackendPool, learner: Learner, metrics: Metrics | None = None) -> None:
        self.settings, self.pool, self.learner, self.metrics = settings, pool, learner, metrics
        self.oracle = load_oracle(settings.oracle_file) if settings.policy == "clairvoyant" else {}
        self.classifier, self.rules = settings.classifier_config(), settings.rules_config()
        self.adaptive, self.regime_config = settings.adaptive_config(), settings.regime_config()
        self.hindsight = settings.hindsight()
        self.regimes: dict[str, RegimeState] = {g: RegimeState() for g in pool.shared_groups()}
        self.evidence = settings.regime_evidence_on(bool(self.regimes))  # the regime moves on measured acceptance
        self.recent: dict[str, deque[GroupRequest]] = {g: deque(maxlen=settings.regime_window_requests)
                                                  for g in self.regimes}
        self.group_decisions: dict[str, int] = dict.fromkeys(self.regimes, 0)
        self._early: dict[str, int] = dict.fromkeys(self.regimes, 0)  # group in its first decisions -> routed since
        self._fresh_mix: dict[GroupRequest, MixRatios] = {}  # a group with no history: its mix
        self.arrivals: dict[str, deque[float]] = {g: deque(maxlen=settings.regime_window_requests)
                                                  for g in self.regimes}
        self._random = random.Random(settings.random_seed).random
        self._turn = 0
        self._regime_views: tuple[dict[str, Role], dict[str, float], dict[str, Role]] | None = None
        self._mixed_at: dict[str, float] = {}  # when each group's mix ratio was last recomputed (monotonic)
        self._full: dict[str, bool] = {}  # per group: saturated by prompts (`saturation.still_saturated`)
        self.view = CandidateView(pool, self.adaptive.exception_load)
        self.fleet = FleetView([b.name for b in pool.backends], prefix_aware=settings.prefix_aware,
                               default_kv_tokens=settings.prefix_default_kv_tokens,
                               max_blocks=settings.prefix_index_max_blocks, chars_per_token=settings.chars_per_token)
        self.probe_worthy: dict[str, frozenset[tuple[str, str]]] = {}  # per group: classes worth probing
        self.running: dict[str, dict[Role, deque[Running]]] = {g: {r: deque(maxlen=512) for r in ROLES} for g in
                                                                self.regimes}  # sent there: a switch prices the drain
        self._totals: dict[str, tuple[dict[Role, float], int]] = {}  # per group: the last mix's totals, its size
        self._surge_rate: dict[str, float] = {}  # per group: the recent arrival rate the last mix was priced at
        self.prices: dict[str, SwitchPrice] = {}  # per group: the last price of its pending switch
        self.migration_plan: MigrationPlan | None = None  # live migration: what a switch would move
        if metrics is not None:  # a group that never switched reads 0 switches, not no data
            for group in self.regimes:
                metrics.child(metrics.regime_switches, group)

    def estimates(self, f: Features, task_class: str, bucket: str, request_id: str,
                  family: int | None = None) -> Estimates:
        lrn = self.learner
        oracle = self.oracle.get(request_id)
        sd, source, raw = 0.0, "oracle", None
        if oracle is not None:
            output, tps = min(oracle.output_tokens, float(f.max_tokens)), oracle.tokens_per_step
        else:
            output, tps, sd, source, raw = lrn.per_request.for_request(  # what the request says refines its class's
                lrn.tokens_per_step_posterior(task_class, bucket), task_class, bucket, f.max_tokens,
                f.max_tokens_given, f.prompt_tokens, f.structured_output, family, f.temperature, f.copy_kind)
        return Estimates(
            output_tokens=output, tokens_per_step=tps,
            tokens_per_step_sd=sd, tokens_per_step_source=source, tokens_per_step_raw=raw,
            step_models={role: lrn.step_model(role) for role in ROLES},
            interference={role: lrn.interference(role) for role in ROLES},
            prefill_s_per_token={role: lrn.prefill_s_per_token(role) for role in ROLES},
            decode_stall={role: lrn.stall.share(role) for role in ROLES}, stall=lrn.shared_stall.model(),
            speculative_observations=lrn.speculative_observations(task_class, bucket),
            bucket_speculative_observations=lrn.bucket_speculative_observations(bucket),
        )

    def route(self, view: RequestView, request_id: str, exclude: frozenset[Backend] = frozenset(),
              session: str | None = None) -> Routed | None:
        f = features(view, self.classifier)
        task_class = classify(f, self.classifier)
        lclass = self.fleet.learner_class(task_class, view.model)
        bucket = temperature_bucket(f.temperature)
        policy = self.settings.policy
        needs_estimates = policy in ("adaptive", "clairvoyant")
        now = time.monotonic()
        off = self.fleet.off_model(view.model, self.pool.backends)
        if needs_estimates:
            self._early_regimes(f, lclass, bucket, now)
        regimes, ratios, pending = self._regime_views or self._views()
        candidates = self.view.candidates(now, exclude | off if off else exclude)
        session = self.fleet.session(view, session)
        matched = self.fleet.matched(view, [c.name for c in candidates]) if needs_estimates else {}
        cached = self.fleet.cached(matched, f.prompt_tokens)
        family = family_of(view.prefix_blocks)
        inp = PolicyInput(
            features=f, task_class=task_class, bucket=bucket, candidates=candidates,
            estimates=self.estimates(f, lclass, bucket, request_id, family) if needs_estimates else None,
            regimes=regimes, regime_ratios=ratios, regime_pending=pending, probe_worthy=self.probe_worthy,
            arrival_rates={g: known_rate(times, now) for g, times in self.arrivals.items()},
            draw=self._random(), sample_draw=self._random(), turn=self._turn,
            scoring=self.view.scoring(candidates, regimes) if needs_estimates else None,
            cached_tokens=cached, affinity=self.fleet.affinity(session))
        self._turn += 1
        decision = decide(policy, inp, self.rules, self.adaptive, self.hindsight)
        if decision is None:
            return None
        chosen, entry = next(c for c in inp.candidates if c.name == decision.backend), None
        if chosen.group in self.regimes and needs_estimates:
            self.arrivals[chosen.group].append(now)
            self.running[chosen.group][chosen.role].append(entry := Running(now, decision.predicted_e2e_s or 0.0))
            group_load = chosen.load + sum(load for _, load in chosen.co_runners)
            held = self.fleet.held_prefix(view, f.prompt_tokens, self.pool.groups.get(chosen.group, ()), matched)
            self._note(chosen.group, group_request(f, lclass, bucket, group_load, held), chosen.role)
            if self.regimes[chosen.group].role != chosen.role and decision.reason == f"regime_{chosen.role}":
                decision, entry = self._to_arriving(inp, policy, decision, chosen.group, entry, now)
        self.fleet.routed(view, session, decision.backend, cached)
        return Routed(decision, f, task_class, bucket, entry, off, lclass, cached, family)

    def _to_arriving(self, inp: PolicyInput, policy: PolicyName, decision: Decision, group: str, entry: Running,
                     now: float) -> tuple[Decision, Running]:
        """The request whose decision took its GPU's switch (`_note`), decided again on the new regime: it goes to
        the arriving server, not to the one the GPU just left, where it would run alone, time-sharing the GPU
        with the arriving server's requests (live migration moves only requests in flight; member 501 of the
        family: 3.1 s against 1.2 s)."""
        regimes, ratios, pending = self._views()
        again = decide(policy, replace(inp, regimes=regimes, regime_ratios=ratios, regime_pending=pending,
                                       scoring=self.view.scoring(inp.candidates, regimes)),
                       self.rules, self.adaptive, self.hindsight)
        if again is None or again.backend == decision.backend:
            return decision, entry
        again = replace(again, detail=f"{again.detail}, the switch this decision took")
        self.running[group][decision.role].remove(entry)
        self.running[group][again.role].append(moved := Running(now, again.predicted_e2e_s or 0.0))
        return again, moved

    def _views(self) -> tuple[dict[str, Role], dict[str, float], dict[str, Role]]:
        """The regimes as the policy reads them, rebuilt only when one changes (a fleet has many groups)."""
        rs = self.regimes
        self._regime_views = ({g: r.role for g, r in rs.items()},
                              {g: r.ratio for g, r in rs.items() if r.ratio is not None},
                              {g: r.pending for g, r in rs.items() if r.pending is not None})
        return self._regime_views

    def _early_regimes(self, f: Features, task_class: str, bucket: str, now: float) -> None:
        """A group's first decisions choose its regime with the request at hand in the mix, before routing it: a
        switch costs least while the GPU is still quiet, and the first request should not go to a server the
        mix already rules out."""
        if not self._early:
            return
        self._fresh_mix.clear()  # estimates may have changed since the last request
        for group, passed in self._early.items():
            if passed >= REGIME_EARLY:  # a group the traffic passes by waits for its next decision
                continue
            self._early[group] = passed + 1
            load = sum(self.pool.load(b, now) for b in self.pool.groups.get(group, []))
            self._update_regime(group, self.group_decisions[group], group_request(f, task_class, bucket, load))

    def _note(self, group: str, recent: GroupRequest, routed: Role) -> None:
        """Remember the request in its group's mix; recompute the regime every few decisions (pending: each)."""
        self.recent[group].append(recent)
        n = self.group_decisions[group] = self.group_decisions[group] + 1
        if n >= REGIME_EARLY:
            self._early.pop(group, None)
        elif group in self._early:
            self._early[group] = 0
        if (n > REGIME_EARLY and n % REGIME_EVERY == 0) or self.regimes[group].pending is not None:
            self._update_regime(group, n, None, routed)

    def _update_regime(self, group: str, n: int, extra: GroupRequest | None, routed: Role | None = None) -> None:
        """Recompute the group's regime (`extra`: the request at hand, not yet routed) and price a pending switch
        (`routed`: the role the request just routed went to, not in flight yet: the price counts it)."""
        before = after = self.regimes[group]
        now, cfg, load = time.monotonic(), self.regime_config, self._mean_load(group)
        sat: bool | None = None  # saturated by prompts, read once per update (`_saturated` keeps a hysteresis)
        seen = self.learner.served_acceptance  # the speculative server's own answers: a trial is judged on them
        if extra is not None or (n % REGIME_EVERY == 0
                                 and now - self._mixed_at.get(group, -math.inf) >= self.settings.regime_min_interval_s):
            self._mixed_at[group] = now
            sat = self._saturated(group)
            hoped, measured, lead = self._mix_ratio(group, extra, load)
            ratio, evidence = rg.capped_ratio(hoped, load, cfg, sat), rg.capped_ratio(measured, load, cfg, sat)
            after = rg.next_regime(before, ratio, now, cfg, evidence, seen, lead, group in self._surge_rate)
            after = rg.leave_large_batch(after, load, now, cfg, sat)
            after = rg.follow_fleet(after, ratio, self._carried_by_others(group), now, self.settings.regime_follow_band)
        price: SwitchPrice | None = None
        if after.pending is not None:
            horizon = rg.switch_horizon(after, now, cfg)
            price = self.prices[group] = self._price(group, after.pending, horizon, now, routed, cfg)
            sat = self._saturated(group) if sat is None else sat
            after = rg.settle(replace(after, observed=max(after.observed, seen)), now, price, cfg, load, sat)
        if after != before:
            self.regimes[group] = after
            self._regime_views = None
        log_event(_log, logging.DEBUG, "regime_update", group=group, n=n, state=after, load=load, price=price)
        if after.role != before.role:  # priced, or not (above the load cap, or joining other replicas)
            log_event(_log, logging.INFO, "regime_switch", group=group, to=after.role, ratio=after.ratio, decisions=n,
                      evidence=after.evidence, trial=after.trial, price=None if price is None else price._asdict(),
                      surge_rate=self._surge_rate.get(group))
        if self.metrics is not None:
            m = self.metrics
            m.child(m.regime, group).set(1 if after.role == "speculative" else 0)
            if after.ratio is not None and after.ratio != before.ratio:
                m.child(m.regime_mix_ratio, group).set(after.ratio)
            if after.switches != before.switches:
                m.child(m.regime_switches, group).inc()

    def _price(self, group: str, to: Role, horizon: float, now: float, routed: Role | None,
               cfg: rg.RegimeConfig) -> SwitchPrice:
        """The cost model's price of moving the group's GPU to `to` now (`gateway.core.regime.switch_price`)."""
        leaving, rate = OTHER_ROLE[to], max(known_rate(self.arrivals[group], now), self._surge_rate.get(group, 0.0))
        plan = self.migration_plan(group, to) if self.migration_plan is not None else sm.NO_MOVES
        count = round(self._load_of_role(group, leaving)) + (routed == leaving)
        left = rg.remaining(self.running[group][leaving], count, now)
        totals, samples = self._totals.get(group, ({"baseline": 0.0, "speculative": 0.0}, 0))
        margin = cfg.leave_margin if to == "baseline" else cfg.switch_margin
        gain = rg.switch_gain(totals, samples, to, rate * horizon, margin)
        # `to` will carry the group's arrivals times a request's cost there (Little), or its recent mean load if more;
        little = rate * totals[to] / samples if samples and totals[to] else 0.0  # a trial: Little's (the mean lags)
        models, load = {role: self.learner.step_model(role) for role in ROLES}, max(self._mean_load(group), little)
        price = sm.net_switch_price(left, plan, models, rg.SWITCH_INTERFERENCE, to, load, gain, cfg.free_drain_s,
                                    self.learner.shared_stall.model())._replace(arriving_load=little)
        if not self.settings.regime_price_cold_cache:  # the prefixes `to` would prefill again (`core.switch_cache`)
            return price
        cold = cold_cache_cost_s(cold_prefix_tokens((r.prefix for r in self.recent[group]), to),
                                 self.learner.prefill_s_per_token(to), load)
        return price._replace(cost_s=price.cost_s + cold, cold_cache_s=cold)

    def _mix_window(self, group: str, extra: GroupRequest | None = None) -> tuple[list[MixSample], list[MixKey], Known]:
        """The group's recent requests as the mix sees them (`gateway.core.mix_window`; `extra`: the one at hand)."""
        now = time.monotonic()
        recent = [*self.recent[group], extra] if extra is not None else self.recent[group]  # no copy: read once
        times = [*self.arrivals[group], now] if extra is not None else list(self.arrivals[group])
        return mix_window(recent, times, now, self.learner, self.settings.regime_optimism,
                          self.settings.regime_optimism_load)

    def _mix_ratio(self, group: str, extra: GroupRequest | None, mean_load: float) -> MixRatios:
        fresh = extra is not None and not self.recent[group] and not self.arrivals[group]
        if fresh and extra in self._fresh_mix:  # a fleet's idle groups: the same one-request mix, computed once
            return self._fresh_mix[extra]
        ratio = self._mix_ratio_of(group, extra, mean_load)
        if fresh and extra is not None:
            self._fresh_mix[extra] = ratio
        return ratio

    def _mix_ratio_of(self, group: str, extra: GroupRequest | None, mean_load: float) -> MixRatios:
        """The group's mix ratio as hoped and at the evidence, and the hope's lead over the evidence on the same
        (whole) window; in a baseline regime, the classes worth probing."""
        lrn = self.learner
        self._surge_rate.pop(group, None)  # this mix's, below (`core.surge`)
        samples, keys, known = self._mix_window(group, extra)
        models = {role: lrn.step_model(role) for role in ROLES}
        w, prefill = self.regime_config.externality_weight, {role: lrn.prefill_s_per_token(role) for role in ROLES}
        totals = rg.mix_costs(samples, models, prefill, w, stall=(stall := lrn.shared_stall.model()))
        on, k = self.evidence, self.settings.regime_evidence_recent_requests  # off: evidence = hope
        measured = rg.mix_costs(samples, models, prefill, w, evidence=on, stall=stall) if on else totals
        self._totals[group] = (measured, len(samples))  # a switch's gain: on the evidence (a trial's is not priced)
        if self.regimes[group].role == "baseline" and mean_load <= self.regime_config.speculation_max_load:
            hope_sd = self.adaptive.explore_hope_sd
            self.probe_worthy[group] = rg.worth_probing(
                samples, [(k[0], k[1]) for k in keys], {(k[0], k[1]): mean + hope_sd * sd for k, (_, mean, sd)
                                                        in known.items()},
                models, totals, w, 1.0 + self.regime_config.switch_margin)
        else:  # nothing to gate: no probes go to a speculative regime's GPU, and a large batch gets none anyway
            self.probe_worthy.pop(group, None)
        if not samples:
            return None, None, None
        hope = rg.ratio_of(totals)
        if not on:
            return hope, None, None
        whole, ev = rg.evidence_ratios(samples, models, prefill, w, k, stall)
        # a speculative regime's mix priced again at the load a surge of arrivals builds (`core.surge`)
        if self.regimes[group].role == "speculative" and (flood := surge(
                self.arrivals[group], time.monotonic(), self.settings.regime_surge_requests,
                measured["speculative"] / len(samples))) is not None:
            costs = surge_costs(samples, flood.load, k, lambda c: rg.mix_costs(c, models, prefill, w, evidence=on,
                                                                               stall=stall))
            ev, self._totals[group], self._surge_rate[group] = min(ev, rg.ratio_of(costs[0])), costs, flood.rate
        return hope, ev, hope - whole

    def _mean_load(self, group: str) -> float:
        return sum(r.load for r in rs) / len(rs) if (rs := self.recent[group]) else 0.0

    def _saturated(self, group: str) -> bool:  # `gateway.core.saturation.still_saturated`: recent load, arrivals
        lrn, times, models = self.learner, self.arrivals[group], {role: self.learner.step_model(role) for role in ROLES}
        on = math.isfinite(lrn.shared_stall.from_load)  # SPECGATE_REGIME_SATURATION_STALL
        prompts = sum(r.prompt_tokens for r in self.recent[group]) * lrn.prefill_s_per_token("baseline") if on else 0.0
        span = time.monotonic() - times[0] if len(times) >= RATE_MIN_ARRIVALS else math.inf
        self._full[group] = still_saturated(self._full.get(group, False), lrn.shared_stall.model(), models,
                                            self._mean_load(group), prompts, span, self.regime_config)
        return self._full[group]

    def _load_of_role(self, group: str, role: Role) -> float:
        now = time.monotonic()
        return sum(self.pool.load(b, now) for b in self.pool.groups.get(group, []) if b.role == role)

    def _carried_by_others(self, group: str) -> Role | None:
        """The role whose server carries the group's GPU by the servers' own gauges, when most of that load is
        other gateways' (this process's own in-flight is under half of it); else None."""
        now = time.monotonic()
        members = self.pool.groups.get(group, [])
        loads: dict[Role, float] = {"baseline": 0.0, "speculative": 0.0}
        for b in members:
            loads[b.role] += self.pool.load(b, now)
        total, own = sum(loads.values()), sum(b.inflight for b in members)
        if total < 2 or own >= 0.5 * total:
            return None
        top: Role = max(ROLES, key=lambda role: loads[role])
        return top if loads[top] >= 3 * loads[OTHER_ROLE[top]] else None

    def export_regimes(self) -> dict[str, str]:
        """Which role carries each shared GPU group (for the state file and a peer's warm start)."""
        return {group: r.role for group, r in self.regimes.items()}

    def import_regimes(self, regimes: dict[str, object]) -> None:
        """Join the regimes another process (or this one before a restart) was in; the dwell counts from here."""
        for group, role in regimes.items():
            if group in self.regimes and role in ROLES:
                self._regime_views = None
                self.regimes[group] = RegimeState(role="speculative" if role == "speculative" else "baseline",
                                                  since_s=time.monotonic())
                if self.metrics is not None:
                    self.metrics.regime.labels(group).set(1 if role == "speculative" else 0)

    def state(self) -> dict[str, object]:
        """Regimes of shared GPU groups, for `/admin/state`."""
        now = time.monotonic()
        return {g: {"role": r.role, "mix_ratio": r.ratio, "evidence_ratio": r.evidence, "hope_lead": r.lead,
                    "trial": r.trial, "switches": r.switches,
                    "held_s": None if math.isinf(r.since_s) else now - r.since_s,
                    "probe_worthy": None if (pw := self.probe_worthy.get(g)) is None else sorted(map("/".join, pw)),
                    "pending_price": None if r.pending is None or g not in self.prices else self.prices[g]._asdict(),
                    "pending": r.pending, "decisions": self.group_decisions[g], "mix": self._mix_summary(g),
                    "surge_rate": self._surge_rate.get(g)}
                for g, r in self.regimes.items()}

    def _mix_summary(self, group: str) -> dict[str, float] | None:
        """What the group's mix ratio is computed from (`gateway.core.regime.mix_summary`)."""
        lrn, w = self.learner, self.regime_config.externality_weight
        return rg.mix_summary(self._mix_window(group)[0], {role: lrn.step_model(role) for role in ROLES},
                           {role: lrn.prefill_s_per_token(role) for role in ROLES}, w)
