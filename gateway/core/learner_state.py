"""The learner's state as plain JSON data: `export_state` and `import_state` (what `persist` saves and peers
share). A state another process learned is read as a prior here: every estimate's weight is capped, and every
value is range-checked first (a state file or a peer is input, not trusted memory).

What `import_state` accepts: only the known keys (the task classes × temperature buckets, the two roles; a
table with many more keys than that is refused whole, unknown keys among a few are dropped), finite numbers
only (one NaN or infinity refuses the whole state), and each value within bounds tied to the priors and the
cost model (`Bounds`): tokens per step within [1, γ + 1], output lengths within [1, `MAX_OUTPUT_TOKENS`],
times within `PRIOR_SPAN` of their prior, interference within [0, 1.5], counts within [0, 2^53]. A value out
of bounds is clamped to them, and said so in the notes the import returns (the caller logs them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gateway.core.classify import TEMPERATURE_BUCKETS
from gateway.core.costmodel import ROLES, Role, StepModel
from gateway.core.domain import TASK_CLASSES
from gateway.core.learner import MAX_OUTPUT_TOKENS, Ewma, Learner, LearnerConfig
from gateway.core.stepfit import tied_models

STATE_VERSION = 1
PRIOR_SPAN = 10.0  # a learned time (step, growth, prefill) within this factor of its prior, either way
INTERFERENCE_MAX = 1.5  # as the learner bounds each observation
MAX_COUNT = float(2**53)
CLASS_KEYS = frozenset(f"{c}/{b}" for c in TASK_CLASSES for b in TEMPERATURE_BUCKETS)
MAX_KEYS = 4 * len(CLASS_KEYS)  # more keys than this in one table: not a state of ours (refused whole)


@dataclass(frozen=True, slots=True)
class Range:
    lo: float
    hi: float

    def clamp(self, x: float, what: str, notes: list[str]) -> float:
        if self.lo <= x <= self.hi:
            return x
        clamped = min(max(x, self.lo), self.hi)
        notes.append(f"{what} {x:.6g} clamped to {clamped:.6g}")
        return clamped


@dataclass(frozen=True, slots=True)
class Bounds:
    """Plausible values of each estimate, from the learner's configuration."""

    tokens_per_step: Range
    log_output: Range
    output_fraction: Range
    prefill_s_per_token: Range
    interference: Range
    base_s: dict[Role, Range]
    per_request_s: dict[Role, Range]

    @classmethod
    def of(cls, config: LearnerConfig) -> Bounds:
        longest = math.log(MAX_OUTPUT_TOKENS)
        prefill = config.prior_prefill_s_per_token
        return cls(
            tokens_per_step=Range(1.0, config.num_speculative_tokens + 1.0),
            log_output=Range(0.0, longest),
            output_fraction=Range(-longest - math.log(8.0), 0.0),  # max_tokens within 8x the natural length
            prefill_s_per_token=Range(prefill / PRIOR_SPAN, prefill * PRIOR_SPAN),
            interference=Range(0.0, INTERFERENCE_MAX),
            base_s={r: _around(p.base_s) for r, p in config.priors.items()},
            per_request_s={r: Range(0.0, PRIOR_SPAN * max(p.per_request_s, 0.01 * p.base_s))
                           for r, p in config.priors.items()},
        )


def _around(prior: float) -> Range:
    return Range(prior / PRIOR_SPAN, prior * PRIOR_SPAN)


def _ewma_out(e: Ewma) -> list[float]:
    return [e.value, e.weight, float(e.count), e.var]


def _number(x: object) -> float:
    if isinstance(x, bool) or not isinstance(x, int | float):
        raise ValueError(f"not a number: {x!r}")
    value = float(x)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {x!r}")
    return value


def _ewma_in(raw: object, max_weight: float, bounds: Range, what: str, notes: list[str]) -> Ewma:
    """An exported estimate, range-checked, its weight capped: what another process learned is a prior here,
    not a lock-in."""
    if not isinstance(raw, list) or len(raw) != 4:
        raise ValueError(f"bad estimate {what}: {raw!r}")
    value, weight, count, var = (_number(x) for x in raw)
    value = bounds.clamp(value, what, notes)
    if weight < 0:
        notes.append(f"{what} weight {weight:.6g} clamped to 0")
    weight = min(max(weight, 0.0), max_weight)  # the cap itself is policy, not a defect: no note
    count = Range(0.0, MAX_COUNT).clamp(count, f"{what} count", notes)
    var = Range(0.0, (bounds.hi - bounds.lo) ** 2).clamp(var, f"{what} variance", notes)
    return Ewma(value, weight, int(count), var)


def export_state(lrn: Learner) -> dict[str, object]:
    """Everything the learner knows, as plain JSON data (`import_state` reads it back)."""
    return {
        "version": STATE_VERSION,
        "tokens_per_step": {f"{c}/{b}": _ewma_out(e) for (c, b), e in lrn._tokens_per_step.items()},
        "bucket_tokens_per_step": {b: _ewma_out(e) for b, e in lrn._bucket_tokens_per_step.items()},
        "log_output": {f"{c}/{b}": _ewma_out(e) for (c, b), e in lrn._log_output.items()},
        "output_fraction": {f"{c}/{b}": _ewma_out(e) for (c, b), e in lrn._output_fraction.items()},
        "backend_tokens_per_step": _ewma_out(lrn._backend_tokens_per_step),
        "prefill": {r: _ewma_out(e) for r, e in lrn._prefill.items()},
        "interference": {r: _ewma_out(e) for r, e in lrn._interference.items()},
        # the models predictions use (each role's growth tied to the other's), in units of the fit's scale
        "step_models": {r: [lrn._models[r].base_s / fit.scale_s, lrn._models[r].per_request_s / fit.scale_s,
                            fit.scale_s] for r, fit in lrn._steps.items()},
    }


class _Reader:
    """Reads one state document's tables, collecting what was dropped or clamped."""

    def __init__(self, state: dict[str, object], max_weight: float, bounds: Bounds) -> None:
        self.state, self.max_weight, self.bounds = state, max_weight, bounds
        self.notes: list[str] = []

    def table(self, name: str, known: frozenset[str], bounds: Range) -> dict[str, Ewma]:
        raw = self.state.get(name)
        if not isinstance(raw, dict):
            raise ValueError(f"missing {name}")
        if len(raw) > MAX_KEYS:
            raise ValueError(f"{name} has {len(raw)} keys (at most {MAX_KEYS} plausible)")
        unknown = sorted(str(k) for k in raw if k not in known)
        if unknown:
            self.notes.append(f"{name}: {len(unknown)} unknown keys dropped ({', '.join(unknown[:3])[:120]})")
        return {k: _ewma_in(v, self.max_weight, bounds, f"{name}[{k}]", self.notes)
                for k, v in raw.items() if k in known}

    def pairs(self, name: str, bounds: Range) -> dict[tuple[str, str], Ewma]:
        out = {}
        for key, e in self.table(name, CLASS_KEYS, bounds).items():
            task_class, _, bucket = key.partition("/")
            out[(task_class, bucket)] = e
        return out

    def step_model(self, role: Role) -> StepModel:
        steps = self.state.get("step_models")
        raw = steps.get(role) if isinstance(steps, dict) else None
        if not isinstance(raw, list) or len(raw) != 3:
            raise ValueError(f"bad step model for {role}")
        base, slope, scale = (_number(x) for x in raw)
        if scale <= 0:
            raise ValueError(f"bad step model scale for {role}: {scale!r}")
        base_s, slope_s = base * scale, slope * scale  # finite factors: at worst ±inf, which the bounds clamp
        return StepModel(self.bounds.base_s[role].clamp(base_s, f"{role} step at batch 1", self.notes),
                         self.bounds.per_request_s[role].clamp(slope_s, f"{role} step growth", self.notes))


def import_state(lrn: Learner, state: dict[str, object], max_weight: float) -> list[str]:
    """Load `export_state` output into a fresh learner, every estimate's weight capped at `max_weight` and every
    value range-checked (see the module docstring). Returns what was dropped or clamped, one note each. Raises
    ValueError (and changes nothing) on a foreign, corrupt, non-finite, implausibly large or other-version
    state."""
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        raise ValueError("not a specgate learner state of this version")
    bounds = Bounds.of(lrn.config)
    read = _Reader(state, max_weight, bounds)
    roles, buckets = frozenset(ROLES), frozenset(TEMPERATURE_BUCKETS)
    prefill = read.table("prefill", roles, bounds.prefill_s_per_token)
    kappas = read.table("interference", roles, bounds.interference)
    if set(prefill) != set(ROLES) or set(kappas) != set(ROLES):
        raise ValueError("missing per-role estimates")
    models = {role: read.step_model(role) for role in ROLES}
    updates = (read.pairs("tokens_per_step", bounds.tokens_per_step),
               read.table("bucket_tokens_per_step", buckets, bounds.tokens_per_step),
               read.pairs("log_output", bounds.log_output), read.pairs("output_fraction", bounds.output_fraction),
               _ewma_in(state.get("backend_tokens_per_step"), max_weight, bounds.tokens_per_step,
                        "backend_tokens_per_step", read.notes))
    lrn._tokens_per_step, lrn._bucket_tokens_per_step, lrn._log_output, lrn._output_fraction = updates[:4]
    lrn._backend_tokens_per_step = updates[4]
    for role in ROLES:
        lrn._prefill[role], lrn._interference[role] = prefill[role], kappas[role]
        fit = lrn._steps[role]
        # the imported model with the prior's spread (`StepFit.from_prior`'s covariance is kept): worth
        # noise / INTERCEPT_VAR = 2.5 observations at batch 1, under any weight cap above that; observations
        # move it as fast as they move the prior. Its range (`Bounds`) keeps a pessimistic model within
        # PRIOR_SPAN of the prior: a role predicted far slower gets no traffic to correct it.
        fit.theta = [models[role].base_s / fit.scale_s, models[role].per_request_s / fit.scale_s]
        lrn._kappa[role] = lrn._shrunk_interference(role)
        lrn._prefill_s[role] = lrn._shrunk_prefill(role)
    lrn._fitted = {role: fit.model() for role, fit in lrn._steps.items()}
    lrn._models = tied_models(lrn._steps, lrn.config.slope_tie, lrn.config.priors, lrn.config.base_tie,
                               lrn.config.base_ratio)
    return read.notes
