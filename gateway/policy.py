"""Pure routing policies: plain data in, a `Decision` (role, reason, predictions) out.

Policies: `baseline`, `speculative` (static), `rules` (static thresholds), `adaptive` (cost model +
learner, the default) and `clairvoyant` (the cost model fed the request's true acceptance and output
length; benchmarks only). Constraints come first in every policy: a request the speculative server
serves badly (n > 1) goes to the baseline, and a role with no available backend is never chosen.
"""

from __future__ import annotations

from dataclasses import dataclass

from gateway.classify import Features
from gateway.costmodel import Load, Prediction, RequestShape, StepModel, predict


@dataclass(frozen=True, slots=True)
class RulesConfig:
    speculative_classes: tuple[str, ...] = ("structured", "code", "extraction")
    max_temperature: float = 0.7
    max_prompt_tokens: int = 2000
    max_inflight: int = 16


@dataclass(frozen=True, slots=True)
class AdaptiveConfig:
    margin: float = 0.05
    explore_rate: float = 0.05
    explore_max_regret: float = 1.5
    explore_max_output_tokens: float = 128.0
    explore_min_observations: int = 3
    explore_unmeasured_max_regret: float = 1.5
    explore_unmeasured_rate: float = 0.25
    home_check: bool = False
    externality_weight: float = 1.0


@dataclass(frozen=True, slots=True)
class Estimates:
    """What the learner (or, for `clairvoyant`, the oracle) says about this request and the GPU."""

    output_tokens: float
    tokens_per_step: float
    baseline_model: StepModel
    speculative_model: StepModel
    baseline_interference: float
    speculative_interference: float
    baseline_prefill_s_per_token: float
    speculative_prefill_s_per_token: float
    speculative_observations: int = 0  # of this request's temperature bucket, over all classes


@dataclass(frozen=True, slots=True)
class PolicyInput:
    features: Features
    cls: str
    available: frozenset[str]  # roles with at least one routable backend
    baseline_load: Load
    speculative_load: Load
    estimates: Estimates | None = None  # required by adaptive and clairvoyant
    draw: float = 1.0  # uniform [0, 1) random draw for exploration, supplied by the caller


@dataclass(frozen=True, slots=True)
class Decision:
    role: str
    reason: str  # stable token, also a metric label
    detail: str  # header text: token plus numbers
    predicted_e2e_s: float | None = None
    predicted_ttft_s: float | None = None
    ratio: float | None = None  # predicted cost on baseline / on speculative


def _static(role: str, reason: str) -> Decision:
    return Decision(role, reason, reason)


def constrained(inp: PolicyInput) -> Decision | None:
    """Decisions that no policy may override."""
    if not inp.available:
        return None
    if inp.features.n > 1 and "baseline" in inp.available:
        return _static("baseline", "n_gt_1")
    if len(inp.available) == 1:
        (role,) = inp.available
        reason = "no_speculative" if role == "baseline" else "only_available"
        return _static(role, reason)
    return None


def decide_rules(inp: PolicyInput, cfg: RulesConfig) -> Decision:
    f = inp.features
    if inp.cls not in cfg.speculative_classes:
        return _static("baseline", "rule_creative" if inp.cls == "creative" else "rule_default")
    if f.temperature > cfg.max_temperature:
        return _static("baseline", "rule_creative")
    if f.prompt_tokens > cfg.max_prompt_tokens:
        return _static("baseline", "rule_long_prompt")
    if inp.speculative_load.inflight >= cfg.max_inflight:
        return _static("baseline", "rule_busy")
    return _static("speculative", "rule_structured")


def predictions(inp: PolicyInput, est: Estimates) -> tuple[Prediction, Prediction]:
    f = inp.features
    base = predict(
        "baseline",
        RequestShape(f.prompt_tokens, est.output_tokens, 1.0),
        inp.baseline_load, inp.speculative_load,
        est.baseline_model, est.speculative_model, est.baseline_interference, est.speculative_interference,
        est.baseline_prefill_s_per_token,
    )
    spec = predict(
        "speculative",
        RequestShape(f.prompt_tokens, est.output_tokens, est.tokens_per_step),
        inp.speculative_load, inp.baseline_load,
        est.speculative_model, est.baseline_model, est.speculative_interference, est.baseline_interference,
        est.speculative_prefill_s_per_token,
    )
    return base, spec


def home_ratio(inp: PolicyInput, est: Estimates) -> float:
    """The request's predicted e2e on the baseline over that on the speculative server, each carrying all the
    GPU's current work with the other idle (> 1: the speculative server is its home)."""
    f = inp.features
    others, idle = Load(inp.baseline_load.inflight + inp.speculative_load.inflight), Load(0)
    base = predict("baseline", RequestShape(f.prompt_tokens, est.output_tokens, 1.0), others, idle,
                   est.baseline_model, est.speculative_model, 0.0, 0.0, est.baseline_prefill_s_per_token)
    spec = predict("speculative", RequestShape(f.prompt_tokens, est.output_tokens, est.tokens_per_step), others,
                   idle, est.speculative_model, est.baseline_model, 0.0, 0.0, est.speculative_prefill_s_per_token)
    return base.e2e_s / max(spec.e2e_s, 1e-9)


def decide_cost(inp: PolicyInput, cfg: AdaptiveConfig, *, explore: bool, token: str) -> Decision:
    """Route to the lower predicted cost; speculative must win by `margin`; bounded exploration."""
    assert inp.estimates is not None, "adaptive and clairvoyant policies need estimates"
    base, spec = predictions(inp, inp.estimates)
    w = cfg.externality_weight
    ratio = base.cost(w) / max(spec.cost(w), 1e-9)
    alone = home_ratio(inp, inp.estimates)
    # The cost right now is sticky: once a server carries the traffic, turning the idle one on looks expensive
    # for every request. With `home_check`, speculative must also be the request's home (its cost with all
    # current work on one server). Off by default: it stopped a busy speculative server from keeping sampled
    # requests it runs at 1.0 token/step on the H200 replay (adaptive 1.86 vs 2.11 s at c = 48 once probes had
    # run), but on the demo, where n-gram pays for most of the mix, consolidating on the busy speculative
    # server is right and the check cost 9% (1.10x vs 1.01x the best static).
    prefer_spec = ratio > 1.0 + cfg.margin and (alone > 1.0 or not cfg.home_check)
    chosen, other = (spec, base) if prefer_spec else (base, spec)
    regret = other.cost(w) / max(chosen.cost(w), 1e-9)
    reason = token
    if not prefer_spec and ratio >= 1.0:  # spec is at least as cheap right now, yet baseline is chosen
        reason = "within_margin" if ratio <= 1.0 + cfg.margin else "home_baseline"
    # A temperature bucket the speculative server has not served enough yet is probed at a higher predicted
    # regret and a higher rate: its acceptance is still the prior, the least trustworthy input, and a prior
    # that makes speculation look slow would otherwise never be corrected (on the H200 the gateway never
    # tried the n-gram server, which was 1.4-1.7x faster for greedy requests when it had the GPU to itself).
    # Probes are short requests (a probe is a request served on the server predicted slower, and on one GPU
    # it also slows every baseline step while it runs: one 256-token probe cost +16% over a 66-request phase
    # of the emulated replay), one at a time, at most `explore_min_observations` per bucket.
    # Routine exploration afterwards: short requests, the normal regret cap and rate.
    unmeasured = (chosen.role == "baseline" and inp.speculative_load.inflight == 0
                  and inp.estimates.speculative_observations < cfg.explore_min_observations)
    cheap = inp.estimates.output_tokens <= cfg.explore_max_output_tokens
    if unmeasured:
        allowed, rate = cheap and regret <= cfg.explore_unmeasured_max_regret, cfg.explore_unmeasured_rate
    else:
        allowed, rate = cheap and regret <= cfg.explore_max_regret, cfg.explore_rate
    if explore and allowed and inp.draw < rate:
        chosen, reason = other, "explore"
    detail = f"{reason} {ratio:.2f}x on speculative, {alone:.2f}x alone"
    return Decision(chosen.role, reason, detail, chosen.e2e_s, chosen.ttft_s, ratio)


def decide(policy: str, inp: PolicyInput, rules: RulesConfig, adaptive: AdaptiveConfig) -> Decision | None:
    """The routing decision, or None when no backend is available."""
    forced = constrained(inp)
    if forced is not None or not inp.available:
        return forced
    if policy == "baseline" or policy == "speculative":
        return _static(policy, "static")
    if policy == "rules":
        return decide_rules(inp, rules)
    if policy == "clairvoyant":
        return decide_cost(inp, adaptive, explore=False, token="oracle")
    return decide_cost(inp, adaptive, explore=True, token="predicted_faster")
