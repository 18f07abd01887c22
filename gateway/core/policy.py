"""Pure routing policies: plain data in, a `Decision` (backend, role, reason, predictions) out.

Every policy sees the routable backends as `Candidate`s (role, GPU group, load, the other servers on its
GPU) and picks one. Static policies pick a role and then its least-loaded backend; `round_robin` and
`least_loaded` are what a Kubernetes Service and vLLM's production-stack router would do; `hindsight`
is a fixed map from (class, temperature bucket) to role (benchmarks); `adaptive` predicts the request's
cost on every candidate with the cost model and the learner's estimates and picks the cheapest;
`clairvoyant` does the same with the request's true acceptance and length (benchmarks).

On a GPU shared by a pair, splitting traffic slows both servers, so `adaptive` routes a shared group to
one server at a time, its **regime** (decided by `gateway.core.regime` from the recent mix, with hysteresis);
the other server of the group gets only bounded probes that measure it. Constraints come first in every
policy: `n > 1` goes to a baseline, and a backend that is not routable is never a candidate.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from statistics import NormalDist
from typing import Literal

from gateway.core.affinity import best_with_affinity, cache_text, with_cached
from gateway.core.candidate import Candidate as Candidate  # re-exported: the policy's view of a backend
from gateway.core.candidate import gpu_load, queued_prefill_tokens
from gateway.core.candidate import scoring_candidates as scoring_candidates
from gateway.core.classify import Features
from gateway.core.costmodel import NO_STALL, CoRunner, Prediction, RequestShape, Role, Stall, StepModel, predict
from gateway.core.domain import Reason
from gateway.core.records import record

PolicyName = Literal["adaptive", "rules", "baseline", "speculative", "clairvoyant", "round_robin", "least_loaded",
                     "hindsight"]
POLICY_NAMES: tuple[PolicyName, ...] = ("adaptive", "rules", "baseline", "speculative", "clairvoyant",
                                        "round_robin", "least_loaded", "hindsight")
_NORMAL = NormalDist()


@dataclass(frozen=True, slots=True)
class RulesConfig:
    speculative_classes: tuple[str, ...]
    max_temperature: float
    max_prompt_tokens: int
    max_inflight: int


@dataclass(frozen=True, slots=True)
class AdaptiveConfig:
    margin: float
    explore_rate: float
    explore_max_regret: float
    explore_max_output_tokens: float
    explore_min_observations: int
    explore_unmeasured_max_regret: float
    explore_unmeasured_rate: float
    externality_weight: float
    exception_load: float  # shared GPU: at most this many requests on it, a request may leave the regime ...
    exception_margin: float  # ... to a server predicted this much cheaper for it
    exception_arrivals: float  # ... when at most this many of the group's requests are expected while it runs
    probe_max_load: float  # shared GPU: no probe while more requests than this are on it or arrive during one
    thompson: bool  # sample the acceptance of backends with a GPU of their own from its posterior
    explore_hope_sd: float = 2.0  # probe only if speculation wins at the acceptance this many sd above its mean
    affinity_tie: float = 0.02  # a session's last backend wins a role's choice within this share of the cheapest
    ttft_weight: float = 0.0  # time to first token counted this much again, beyond its share of e2e (`objective`)
    fleet_ttft_weight: float = 0.0  # ... instead, where no candidate shares a GPU (`for_candidates`)


@record
class Estimates:
    """What the learner (or, for `clairvoyant`, the oracle) says about this request and the servers."""

    output_tokens: float
    tokens_per_step: float
    step_models: Mapping[Role, StepModel]
    interference: Mapping[Role, float]
    prefill_s_per_token: Mapping[Role, float]
    tokens_per_step_sd: float = 0.0
    speculative_observations: int = 0  # of this request's (class, temperature bucket)
    bucket_speculative_observations: int = 0  # of its temperature bucket, over all classes
    tokens_per_step_source: str = ""  # the acceptance cells `tokens_per_step` came from (`AcceptanceCells.explained`)
    tokens_per_step_raw: float | None = None  # before `calibration` (None: not from the cells, e.g. the oracle's)
    decode_stall: Mapping[Role, float] = field(default_factory=dict)  # a fleet server's decode share (`decode_stall`)
    stall: Stall = NO_STALL  # a saturated shared GPU's prefill in every step (`costmodel.Stall`)


@record
class PolicyInput:
    features: Features
    task_class: str
    bucket: str
    candidates: tuple[Candidate, ...]  # routable backends
    estimates: Estimates | None = None  # required by adaptive and clairvoyant
    regimes: Mapping[str, Role] = field(default_factory=dict)  # shared GPU group -> the role that carries it
    regime_ratios: Mapping[str, float] = field(default_factory=dict)  # shared group -> mix cost baseline/spec
    draw: float = 1.0  # uniform [0, 1) draw for exploration, supplied by the caller
    sample_draw: float = 0.5  # uniform (0, 1) draw for Thompson sampling, supplied by the caller
    turn: int = 0  # round_robin's counter, supplied by the caller
    regime_pending: Mapping[str, Role] = field(default_factory=dict)  # shared group -> a switch not yet free
    arrival_rates: Mapping[str, float] = field(default_factory=dict)  # shared group -> its recent requests per second
    # shared group in a baseline regime -> the (class, bucket)s whose first measurement could move it (no entry: all)
    probe_worthy: Mapping[str, frozenset[tuple[str, str]]] = field(default_factory=dict)
    # `scoring_candidates(candidates, regimes, exception_load)` when the caller has it (None: computed here)
    scoring: tuple[Candidate, ...] | None = None
    # fleet: prompt tokens each backend has likely cached (`core.prefix_index`; absent: none), the session's last
    cached_tokens: Mapping[str, int] = field(default_factory=dict)
    affinity: str | None = None


@record
class Decision:
    backend: str
    role: Role
    reason: Reason  # stable token, also a metric label
    detail: str  # header text: token plus numbers
    predicted_e2e_s: float | None = None
    predicted_ttft_s: float | None = None
    ratio: float | None = None  # predicted cost on the best baseline / on the best speculative backend
    output_tokens: float | None = None  # the output length the prediction assumed (logged: its error's share)
    queued_tokens: float = 0.0  # prompt tokens priced as queued ahead of it on its server (the learner nets them out)
    tokens_per_step: float | None = None  # the speculative tokens per decode step the prediction assumed (logged)
    tokens_per_step_source: str = ""  # where that came from (`Estimates.tokens_per_step_source`)
    tokens_per_step_raw: float | None = None  # the same before its calibration (`Estimates.tokens_per_step_raw`)


def _least_loaded(candidates: Sequence[Candidate]) -> Candidate:
    """Fewest requests; on a tie, the quieter GPU."""
    return min(candidates, key=lambda c: (c.load, sum(load for _, load in c.co_runners)))


def _of_role(inp: PolicyInput, role: Role) -> list[Candidate]:
    return [c for c in inp.candidates if c.role == role]


def _static(inp: PolicyInput, role: Role, reason: Reason) -> Decision:
    """The least-loaded backend of `role`, or of any role when `role` has none."""
    chosen = _least_loaded(_of_role(inp, role) or list(inp.candidates))
    return Decision(chosen.name, chosen.role, reason, reason)


def constrained(inp: PolicyInput) -> Decision | None:
    """Decisions that no policy may override."""
    if inp.features.n > 1 and _of_role(inp, "baseline"):
        return _static(inp, "baseline", "n_gt_1")
    roles = {c.role for c in inp.candidates}
    if len(roles) == 1:
        (role,) = roles
        return _static(inp, role, "no_speculative" if role == "baseline" else "only_available")
    return None


def decide_rules(inp: PolicyInput, cfg: RulesConfig) -> Decision:
    f = inp.features
    if inp.task_class not in cfg.speculative_classes:
        return _static(inp, "baseline", "rule_creative" if inp.task_class == "creative" else "rule_default")
    if f.temperature > cfg.max_temperature:
        return _static(inp, "baseline", "rule_creative")
    if f.prompt_tokens > cfg.max_prompt_tokens:
        return _static(inp, "baseline", "rule_long_prompt")
    if _least_loaded(_of_role(inp, "speculative")).load >= cfg.max_inflight:
        return _static(inp, "baseline", "rule_busy")
    return _static(inp, "speculative", "rule_structured")


def predict_on(c: Candidate, est: Estimates, prompt_tokens: int, tokens_per_step: float) -> Prediction:
    """The request's prediction on one candidate, with the co-runners on its GPU."""
    co = tuple(CoRunner(est.step_models[role], load, est.interference[role]) for role, load in c.co_runners)
    tps = tokens_per_step if c.role == "speculative" else 1.0
    prefill = est.prefill_s_per_token[c.role]
    if c.co_runners:  # a pair's GPU: its cost model as it was (the regime prices what the pair shares), and the
        stall = est.stall.step_s(gpu_load(c))  # prompts each step carries while the GPU is saturated (`Stall`)
        return predict(RequestShape(prompt_tokens, est.output_tokens, tps), c.load, est.step_models[c.role],
                       est.interference[c.role], prefill, co, stall_step_s=stall)
    return predict(RequestShape(prompt_tokens, est.output_tokens, tps), c.load, est.step_models[c.role],
                   est.interference[c.role], prefill, co, queued_prefill_tokens(c.queued, prefill), stall=True,
                   decode_stall=est.decode_stall.get(c.role, 0.0))


@functools.lru_cache(maxsize=16)  # a config per settings object: a few in a process, more only in tests
def _fleet(cfg: AdaptiveConfig) -> AdaptiveConfig:
    """`cfg`'s fleet variant, made once."""
    return replace(cfg, ttft_weight=cfg.fleet_ttft_weight)


def for_candidates(cfg: AdaptiveConfig, candidates: Sequence[Candidate]) -> AdaptiveConfig:
    """The config a decision among `candidates` uses: on a fleet whose servers all have GPUs of their own, TTFT
    weighs `fleet_ttft_weight`; where any shares a GPU, `ttft_weight` (a pair's regime decides most of its requests,
    and one objective compares all candidates). Why a fleet weighs it: results/fleet-ttft-2026-12-06-l."""
    if cfg.fleet_ttft_weight == cfg.ttft_weight or any(c.co_runners for c in candidates):
        return cfg
    return _fleet(cfg)


def objective(p: Prediction, cfg: AdaptiveConfig) -> float:
    """What the cost policy minimises: e2e plus the weighted delay imposed on others, plus `ttft_weight` x TTFT where
    a deployment counts the first token beyond its share of e2e (off by default: results/mooncake-2026-12-05-h)."""
    return p.cost(cfg.externality_weight) + cfg.ttft_weight * p.ttft_s


def _queued(c: Candidate, est: Estimates) -> float:
    """The prompt tokens `predict_on` priced as queued ahead of a request on `c` (none on a shared GPU)."""
    return 0.0 if c.co_runners else queued_prefill_tokens(c.queued, est.prefill_s_per_token[c.role])


def _idle_gpu(c: Candidate) -> bool:
    return c.load == 0 and all(load == 0 for _, load in c.co_runners)


def _outside_regime(inp: PolicyInput, c: Candidate) -> bool:
    return c.shared and inp.regimes.get(c.group, "baseline") != c.role


def _sampled_tps(inp: PolicyInput, est: Estimates, cfg: AdaptiveConfig) -> float:
    """Thompson sampling of the acceptance while the request's class or its temperature bucket has fewer than
    `explore_min_observations` speculative responses; a measured class is routed on its mean. Its spread stays
    wide once measured (answers of one class copy 1.0 to 4.5 tokens a step), and sampling it only flipped the
    requests near the break-even both ways (measured neutral on the four mixed Azure cells against sampling every
    decision: results/fleet-bursts-2026-12-05-g). Only a request expected short (`explore_max_output_tokens`, as a
    probe): what a lucky draw costs grows with the answer, what it teaches does not (a response counts once in its
    cells); the chat of azure-conv-a, rarely speculated and so sampled on every request, sent 400-600-token answers
    to a speculative server on a draw (results/fleet-peers-2026-12-06-j)."""
    if (not cfg.thompson or est.tokens_per_step_sd <= 0 or est.output_tokens > cfg.explore_max_output_tokens
            or min(est.speculative_observations, est.bucket_speculative_observations) >= cfg.explore_min_observations):
        return est.tokens_per_step
    z = _NORMAL.inv_cdf(min(max(inp.sample_draw, 1e-6), 1 - 1e-6))
    return max(est.tokens_per_step + z * est.tokens_per_step_sd, 1.0)


Scored = tuple[float, Candidate, Prediction]


def decide_cost(inp: PolicyInput, cfg: AdaptiveConfig, *, explore: bool, token: Reason) -> Decision:
    """The candidate with the lowest predicted cost (latency + weighted delay imposed on others); a
    speculative backend must win by `margin`; bounded probes of what the regime keeps unmeasured."""
    est = inp.estimates
    assert est is not None, "adaptive and clairvoyant policies need estimates"
    prompt = inp.features.prompt_tokens
    sampled = _sampled_tps(inp, est, cfg) if explore else est.tokens_per_step
    scored = []
    scoring = inp.scoring
    if scoring is None:
        scoring = scoring_candidates(inp.candidates, inp.regimes, cfg.exception_load)
    cached = inp.cached_tokens
    if cached or inp.affinity is not None:
        scoring = with_cached(inp.candidates, scoring, cached, inp.affinity)
    for c in scoring:
        # Thompson sampling only where a probe costs nobody else: a speculative backend with its own GPU.
        tps = sampled if not c.shared else est.tokens_per_step
        p = predict_on(c, est, prompt - cached.get(c.name, 0) if cached else prompt, tps)
        scored.append((objective(p, cfg), c, p))
    base, spec = (best_with_affinity([s for s in scored if s[1].role == role], inp.affinity, cfg.affinity_tie)
                  for role in ("baseline", "speculative"))  # the cheapest of each role, or the session's if as cheap
    ratio: float | None = None
    if base is not None and spec is not None:
        ratio = r = base[0] / max(spec[0], 1e-9)
        on_spec = r > 1.0 + cfg.margin  # a flag, not `pick is spec`: compiled (mypyc), tuples lose their identity
        pick = spec if on_spec else base
        reason = token if on_spec or r < 1.0 else "within_margin"
        if _outside_regime(inp, pick[1]) and not _exception_pays(inp, cfg, pick, r if on_spec else 1.0 / r):
            pick = base if on_spec else spec  # not worth leaving the regime for
            reason = "regime_baseline" if pick[1].role == "baseline" else "regime_speculative"
    else:  # a shared group's regime left one role
        pick = min(scored, key=lambda s: s[0])
        regime: Reason = "regime_speculative" if pick[1].role == "speculative" else "regime_baseline"
        reason = regime if len(scored) < len(inp.candidates) else token
    probe = _probe(inp, cfg, est, pick) if explore else None
    if probe is not None:
        pick, reason = probe, "explore"
    _, chosen, pred = pick
    if chosen.role == "speculative" and not chosen.shared and sampled != est.tokens_per_step:
        # chosen on a Thompson sample; what it is expected to take is the posterior mean's (the sample that won is
        # optimistic by selection, and the prediction is what the learner and the logs compare with the outcome)
        pred = predict_on(chosen, est, prompt - cached.get(chosen.name, 0) if cached else prompt,
                          est.tokens_per_step)
    detail = f"{reason} {_ratio_text(ratio)} on speculative at {est.tokens_per_step:.2f} tokens/step"
    detail += f" ({est.tokens_per_step_source or 'class'}), {chosen.name}@{chosen.group}"
    detail += cache_text(cached.get(chosen.name, 0), prompt, inp.affinity == chosen.name)
    mix = inp.regime_ratios.get(chosen.group)
    if mix is not None:
        detail += f", mix {mix:.2f}x"
    pending = inp.regime_pending.get(chosen.group)
    if pending is not None:
        detail += f", to {pending} when free"
    return Decision(chosen.name, chosen.role, reason, detail, pred.e2e_s, pred.ttft_s, ratio, est.output_tokens,
                    _queued(chosen, est), est.tokens_per_step, est.tokens_per_step_source, est.tokens_per_step_raw)


def _exception_pays(inp: PolicyInput, cfg: AdaptiveConfig, pick: Scored, gain: float) -> bool:
    """A request may leave its GPU's regime only while few of the group's requests are expected to arrive during
    it (they would go to the regime's server and time-share the GPU with it: on the bursty trace, requests sent
    to an idle baseline just before a burst slowed the burst ~25%), and, unless the GPU is idle, only for a gain
    of `exception_margin`."""
    c, pred = pick[1], pick[2]
    if inp.arrival_rates.get(c.group, 0.0) * pred.e2e_s > cfg.exception_arrivals:
        return False
    return _idle_gpu(c) or gain >= 1.0 + cfg.exception_margin


def _ratio_text(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio:.2f}x"


def _probe(inp: PolicyInput, cfg: AdaptiveConfig, est: Estimates, pick: Scored) -> Scored | None:
    """A short request sent to a speculative server its group's regime keeps idle, to measure it: more often
    (and at a higher regret) while its temperature bucket has fewer than `explore_min_observations`
    speculative observations or its class none, one probe at a time; once measured, only when its GPU is quiet.
    A probe adds observations; it never changes a regime by itself."""
    if pick[1].role != "baseline" or est.output_tokens > cfg.explore_max_output_tokens or inp.draw >= max(
            cfg.explore_rate, cfg.explore_unmeasured_rate):
        return None
    unmeasured = (est.bucket_speculative_observations < cfg.explore_min_observations
                  or est.speculative_observations < 1)
    rate, cap = ((cfg.explore_unmeasured_rate, cfg.explore_unmeasured_max_regret) if unmeasured
                 else (cfg.explore_rate, cfg.explore_max_regret))
    if inp.draw >= rate:
        return None
    # a probe of a measured bucket waits until the whole GPU is quiet: on a busy one it slows everyone running
    idle = [c for c in inp.candidates if c.role == "speculative" and c.load == 0
            and (unmeasured or _idle_gpu(c))]
    if not idle:
        return None
    c = idle[0]
    worthy = inp.probe_worthy.get(c.group)
    if unmeasured and worthy is not None and (inp.task_class, inp.bucket) not in worthy:
        return None  # too rare in the group's mix for its answer to move the regime, and it slows its neighbours
    p = predict_on(c, est, inp.features.prompt_tokens, est.tokens_per_step)
    if c.shared and (gpu_load(c) > cfg.probe_max_load
                     or inp.arrival_rates.get(c.group, 0.0) * p.e2e_s > cfg.exception_arrivals):
        return None  # a busy GPU is not speculated on anyway (the regime's load cap), and a probe slows all of it
    cost = objective(p, cfg)
    if cost > cap * pick[0]:
        return None
    # what a first probe can teach: nothing, if even a plausibly good acceptance would not make speculation the
    # cheaper server for this request (a sampled class on an n-gram server; probes on a shared GPU slow the
    # requests beside them: 3.6 s of one creative-heavy run went to one such probe and its co-runners). Once
    # measured, the rare quiet-GPU probes stay: they are what corrects an estimate gone wrong.
    hope = est.tokens_per_step + cfg.explore_hope_sd * est.tokens_per_step_sd
    if unmeasured and objective(predict_on(c, est, inp.features.prompt_tokens, hope), cfg) >= pick[0]:
        return None
    return cost, c, p


def _cached_instead(inp: PolicyInput, cfg: AdaptiveConfig, forced: Decision) -> Decision:
    """One role to choose from: a backend that likely holds part of the prompt (or the session's last, or has less
    prefill queued) when it is predicted cheaper than the least-loaded one."""
    est, cached, prompt = inp.estimates, inp.cached_tokens, inp.features.prompt_tokens
    if est is None or not (cached or inp.affinity or any(c.queued for c in inp.candidates)):
        return forced
    scored = [(objective(predict_on(c, est, prompt - cached.get(c.name, 0), est.tokens_per_step), cfg), c, None)
              for c in inp.candidates]
    best = best_with_affinity(scored, inp.affinity, cfg.affinity_tie)
    c = best[1] if best is not None else next(c for c in inp.candidates if c.name == forced.backend)
    text = cache_text(cached.get(c.name, 0), prompt, inp.affinity == c.name)
    if c.name == forced.backend:
        return replace(forced, detail=forced.detail + text, queued_tokens=_queued(c, est))
    reason: Reason = "prefix_cache" if text else "prefill_queue"
    return Decision(c.name, c.role, reason, f"{reason}, {c.name}@{c.group}{text}", queued_tokens=_queued(c, est))


def decide(policy: PolicyName, inp: PolicyInput, rules: RulesConfig, adaptive: AdaptiveConfig,
           hindsight: Mapping[str, Role] | None = None) -> Decision | None:
    """The routing decision, or None when no backend is available."""
    if not inp.candidates:
        return None
    adaptive = for_candidates(adaptive, inp.candidates)
    forced = constrained(inp)
    if forced is not None:
        cost_based = policy in ("adaptive", "clairvoyant") and forced.reason != "n_gt_1"
        return _cached_instead(inp, adaptive, forced) if cost_based else forced
    if policy == "baseline" or policy == "speculative":
        return _static(inp, policy, "static")
    if policy == "rules":
        return decide_rules(inp, rules)
    if policy == "round_robin":
        ordered = sorted(inp.candidates, key=lambda c: c.name)
        chosen = ordered[inp.turn % len(ordered)]
        return Decision(chosen.name, chosen.role, "round_robin", "round_robin")
    if policy == "least_loaded":
        chosen = min(inp.candidates, key=lambda c: (c.load, c.name))
        return Decision(chosen.name, chosen.role, "least_loaded", f"least_loaded {chosen.load:g}")
    if policy == "hindsight":
        role = (hindsight or {}).get(f"{inp.task_class}/{inp.bucket}", "baseline")
        return _static(inp, role, "hindsight")
    if policy == "clairvoyant":
        return decide_cost(inp, adaptive, explore=False, token="oracle")
    return decide_cost(inp, adaptive, explore=True, token="predicted_faster")
