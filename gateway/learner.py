"""Pure online estimates the adaptive policy needs: no I/O, no clock; observations come in as data.

- tokens per engine step on the speculative server, per (class, temperature bucket), from each streamed
  speculative response (completion tokens / content chunks: each vLLM chunk is one engine step), shrunk
  toward the temperature bucket, then toward the prior (or the backend-wide tokens per step from the scraped
  `vllm:` counter deltas, where that is lower);
- output tokens per (class, temperature bucket);
- step time vs load per role (`StepModel`), fitted by recursive least squares with forgetting on
  features [1, load_self], starting from the configured priors, and κ, the share of the other server's
  step that a step waits for;
- prefill seconds per prompt token, per role.
Every estimate starts at a prior and forgets old observations geometrically (`forgetting` per update).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.costmodel import OTHER_ROLE, ROLES, StepModel, step_s


@dataclass(slots=True)
class Ewma:
    """Exponentially forgetting weighted mean."""

    value: float
    weight: float = 0.0
    count: int = 0

    def update(self, x: float, forgetting: float, w: float = 1.0) -> None:
        self.weight = self.weight * forgetting + w
        self.value += (x - self.value) * (w / self.weight)
        self.count += 1

    def shrunk(self, prior: float, prior_weight: float) -> float:
        """The mean pulled toward `prior` as if it had `prior_weight` observations."""
        total = self.weight + prior_weight
        if total <= 0:
            return prior
        return (self.value * self.weight + prior * prior_weight) / total


@dataclass(slots=True)
class StepFit:
    """Recursive least squares (Kalman form, with forgetting) of one server's own step time on [1, load],
    in units of its prior base step time."""

    theta: list[float]
    p: list[list[float]]
    scale_s: float
    noise: float = 0.05
    count: int = 0

    @classmethod
    def from_prior(cls, prior: StepModel) -> StepFit:
        scale = prior.base_s
        return cls(theta=[1.0, prior.per_request_s / scale], p=[[0.5, 0.0], [0.0, 0.02**2]], scale_s=scale)

    def update(self, load: float, step_s: float, forgetting: float) -> None:
        x = (1.0, load)
        y = step_s / self.scale_s
        px = [self.p[i][0] * x[0] + self.p[i][1] * x[1] for i in range(2)]
        denom = self.noise + x[0] * px[0] + x[1] * px[1]
        gain = [v / denom for v in px]
        err = y - (self.theta[0] + self.theta[1] * load)
        self.theta = [self.theta[i] + gain[i] * err for i in range(2)]
        p = [[(self.p[i][j] - gain[i] * px[j]) / forgetting for j in range(2)] for i in range(2)]
        for i, cap in enumerate((1.0, 0.05**2)):  # bounded: forgetting without excitation cannot wind up
            if p[i][i] > cap:
                factor = (cap / p[i][i]) ** 0.5
                for j in range(2):
                    p[i][j] *= factor
                    p[j][i] *= factor
        self.p = p
        self.count += 1

    def model(self) -> StepModel:
        base, per_request = self.theta[0] * self.scale_s, max(self.theta[1], 0.0) * self.scale_s
        return StepModel(max(base, 0.1 * self.scale_s), per_request)


@dataclass(frozen=True, slots=True)
class LearnerConfig:
    forgetting: float = 0.98
    prior_weight: float = 3.0
    prior_tokens_per_step: float = 2.0
    prior_output_tokens: float = 256.0
    num_speculative_tokens: int = 4
    prior_prefill_s_per_token: float = 0.00004
    prior_interference: dict[str, float] = field(default_factory=lambda: {"baseline": 0.2, "speculative": 1.0})
    priors: dict[str, StepModel] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Observation:
    """One finished request, as the gateway saw it."""

    role: str
    cls: str
    bucket: str
    prompt_tokens: int
    completion_tokens: int
    steps: int | None  # content chunks of a streamed response; None when not streamed
    ttft_s: float
    e2e_s: float
    load_self: int  # in flight on the role when the request started, itself included
    load_other: int
    max_tokens: int | None = None  # as the client set it


@dataclass(frozen=True, slots=True)
class ClassEstimate:
    tokens_per_step: float
    acceptance_rate: float
    output_tokens: float
    speculative_observations: int
    observations: int


def acceptance_rate(tokens_per_step: float, gamma: int) -> float:
    """Per-token acceptance α with (1 − α^(γ+1)) / (1 − α) = tokens per step (bisection)."""
    target = min(max(tokens_per_step, 1.0), gamma + 1.0)
    lo, hi = 0.0, 1.0
    for _ in range(40):
        mid = (lo + hi) / 2
        expected = sum(mid**k for k in range(gamma + 1))
        if expected < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


class Learner:
    """Online estimates per (class, temperature bucket) and per role."""

    def __init__(self, config: LearnerConfig) -> None:
        self.config = config
        self._tokens_per_step: dict[tuple[str, str], Ewma] = {}
        self._bucket_tokens_per_step: dict[str, Ewma] = {}
        self._output_tokens: dict[tuple[str, str], Ewma] = {}
        self._output_fraction: dict[tuple[str, str], Ewma] = {}
        self._backend_tokens_per_step = Ewma(config.prior_tokens_per_step)
        self._steps = {role: StepFit.from_prior(config.priors[role]) for role in ROLES}
        self._prefill = {role: Ewma(config.prior_prefill_s_per_token) for role in ROLES}
        self._models = {role: fit.model() for role, fit in self._steps.items()}
        self._interference = {role: Ewma(config.prior_interference[role]) for role in ROLES}
        # the decision path reads these every request; they change only in `observe`
        self._kappa = {role: self._shrunk_interference(role) for role in ROLES}
        self._prefill_s = {role: self._shrunk_prefill(role) for role in ROLES}

    # --- estimates used on the decision path (cheap lookups)
    def step_model(self, role: str) -> StepModel:
        return self._models[role]

    def interference(self, role: str) -> float:
        """κ of `role`: the share of the other server's step that its step waits for when both have work."""
        return self._kappa[role]

    def prefill_s_per_token(self, role: str) -> float:
        return self._prefill_s[role]

    def _shrunk_interference(self, role: str) -> float:
        kappa = self._interference[role].shrunk(self.config.prior_interference[role], self.config.prior_weight)
        return min(max(kappa, 0.0), 1.2)

    def _shrunk_prefill(self, role: str) -> float:
        return self._prefill[role].shrunk(self.config.prior_prefill_s_per_token, self.config.prior_weight)

    def backend_tokens_per_step(self) -> float:
        return self._backend_tokens_per_step.shrunk(self.config.prior_tokens_per_step, self.config.prior_weight)

    def tokens_per_step(self, cls: str, bucket: str) -> float:
        """Shrunk in two levels: (class, bucket) toward the bucket over all classes (temperature is the
        strongest single predictor of acceptance), which is shrunk toward the prior, or the backend-wide
        value where that is lower. Never toward a higher backend-wide value: it averages the requests the
        policy chose to send there (on the emulated H200 replay, greedy ones at 2.8 tokens/step), so it
        overstates every other bucket (sampled ones ran at 1.0)."""
        pw = self.config.prior_weight
        prior = min(self.backend_tokens_per_step(), self.config.prior_tokens_per_step)
        level = self._bucket_tokens_per_step.get(bucket)
        if level is not None:
            prior = level.shrunk(prior, pw)
        est = self._tokens_per_step.get((cls, bucket))
        return prior if est is None else est.shrunk(prior, pw)

    def output_tokens(self, cls: str, bucket: str, max_tokens: int, max_tokens_given: bool = False) -> float:
        """Expected completion tokens: the learned fraction of `max_tokens` when the client set it (apps
        size max_tokens to the task), else the learned mean length; never above `max_tokens`."""
        if max_tokens_given:
            frac = self._output_fraction.get((cls, bucket))
            if frac is not None:
                return max(1.0, frac.shrunk(1.0, 1.0) * max_tokens)
        est = self._output_tokens.get((cls, bucket))
        prior = min(self.config.prior_output_tokens, float(max_tokens))
        mean = prior if est is None else est.shrunk(prior, self.config.prior_weight)
        return min(mean, float(max_tokens))

    def bucket_speculative_observations(self, bucket: str) -> int:
        est = self._bucket_tokens_per_step.get(bucket)
        return 0 if est is None else est.count

    def speculative_observations(self, cls: str, bucket: str) -> int:
        est = self._tokens_per_step.get((cls, bucket))
        return 0 if est is None else est.count

    # --- updates (off the decision path)
    def observe(self, obs: Observation) -> None:
        f = self.config.forgetting
        key = (obs.cls, obs.bucket)
        if obs.completion_tokens > 0:
            self._output_tokens.setdefault(key, Ewma(self.config.prior_output_tokens)).update(
                obs.completion_tokens, f
            )
            if obs.max_tokens:
                self._output_fraction.setdefault(key, Ewma(1.0)).update(
                    min(obs.completion_tokens / obs.max_tokens, 1.0), f)
        steps = obs.steps
        if obs.role == "baseline" and steps is None:
            steps = obs.completion_tokens
        if obs.role == "speculative" and steps:
            tps = min(max(obs.completion_tokens / steps, 1.0), self.config.num_speculative_tokens + 1.0)
            weight = min(steps / 16.0, 4.0)
            self._tokens_per_step.setdefault(key, Ewma(self.config.prior_tokens_per_step)).update(tps, f, w=weight)
            self._bucket_tokens_per_step.setdefault(obs.bucket, Ewma(self.config.prior_tokens_per_step)).update(
                tps, f, w=weight)
        other = OTHER_ROLE[obs.role]
        if steps is not None and steps >= 3 and obs.e2e_s > obs.ttft_s:
            observed = (obs.e2e_s - obs.ttft_s) / (steps - 1)
            waits = self._models[other].own_s(obs.load_other) if obs.load_other > 0 else 0.0
            if waits > 0:  # what the step waited for, beyond its own work: the interference share
                own = self._models[obs.role].own_s(obs.load_self)
                self._interference[obs.role].update(min(max((observed - own) / waits, 0.0), 1.5), f)
                self._kappa[obs.role] = self._shrunk_interference(obs.role)
            self._steps[obs.role].update(obs.load_self, max(observed - self._kappa[obs.role] * waits, 0.0), f)
            self._models[obs.role] = self._steps[obs.role].model()
        if obs.prompt_tokens >= 64:
            step = step_s(self._models[obs.role], self._models[other], obs.load_self, obs.load_other,
                          self._kappa[obs.role])
            per_token = max(obs.ttft_s - step, 0.0) / obs.prompt_tokens
            prior = self.config.prior_prefill_s_per_token
            self._prefill[obs.role].update(min(per_token, 50 * prior), f)
            self._prefill_s[obs.role] = self._shrunk_prefill(obs.role)

    def observe_backend_acceptance(self, tokens_per_step: float, drafts: float) -> None:
        """Counter deltas of one scrape: output tokens per engine step (`SpecDelta.tokens_per_step`), weighted
        by the `drafts` draft rounds behind it."""
        if drafts > 0:
            weight = min(drafts / 64.0, 8.0)
            self._backend_tokens_per_step.update(tokens_per_step, self.config.forgetting, w=weight)

    # --- introspection
    def class_estimates(self) -> dict[tuple[str, str], ClassEstimate]:
        keys = set(self._tokens_per_step) | set(self._output_tokens)
        out = {}
        for cls, bucket in sorted(keys):
            tps = self.tokens_per_step(cls, bucket)
            outputs = self._output_tokens.get((cls, bucket))
            out[(cls, bucket)] = ClassEstimate(
                tokens_per_step=tps,
                acceptance_rate=acceptance_rate(tps, self.config.num_speculative_tokens),
                output_tokens=self.output_tokens(cls, bucket, 1 << 30),
                speculative_observations=self.speculative_observations(cls, bucket),
                observations=0 if outputs is None else outputs.count,
            )
        return out

    def state(self) -> dict[str, object]:
        return {
            "backend_tokens_per_step": self.backend_tokens_per_step(),
            "step_models": {
                role: {**_asdict(self._models[role]), "observations": self._steps[role].count} for role in ROLES
            },
            "prefill_s_per_token": {role: self.prefill_s_per_token(role) for role in ROLES},
            "interference": {role: self.interference(role) for role in ROLES},
            "classes": {
                f"{cls}/{bucket}": _asdict(est) for (cls, bucket), est in self.class_estimates().items()
            },
        }


    # --- persistence: a state file or a peer's export, imported as a capped prior (issue 16)
    STATE_SCHEMA = 1  # bump when the exported layout changes; an import of another schema is refused

    def export_state(self) -> dict[str, object]:
        """Everything learned, as JSON-ready data (the inverse of `import_state`)."""
        return {
            "schema": self.STATE_SCHEMA,
            "num_speculative_tokens": self.config.num_speculative_tokens,
            "tokens_per_step": {f"{c}/{b}": _ewma_out(e) for (c, b), e in self._tokens_per_step.items()},
            "bucket_tokens_per_step": {b: _ewma_out(e) for b, e in self._bucket_tokens_per_step.items()},
            "output_tokens": {f"{c}/{b}": _ewma_out(e) for (c, b), e in self._output_tokens.items()},
            "output_fraction": {f"{c}/{b}": _ewma_out(e) for (c, b), e in self._output_fraction.items()},
            "backend_tokens_per_step": _ewma_out(self._backend_tokens_per_step),
            "prefill": {role: _ewma_out(self._prefill[role]) for role in ROLES},
            "interference": {role: _ewma_out(self._interference[role]) for role in ROLES},
            "steps": {role: {"base_s": m.base_s, "per_request_s": m.per_request_s, "count": self._steps[role].count}
                      for role, m in self._models.items()},
        }

    def import_state(self, state: dict[str, object], max_weight: float | None = None) -> None:
        """Start from exported estimates as a prior, not a lock-in: every imported mean keeps its value and
        observation count (so a measured bucket is not probed as if unmeasured) but weighs at most
        `max_weight` observations (default: the prior weight), so new traffic moves it as fast as it moves a
        prior; step models come back with the prior's uncertainty. Raises ValueError on anything malformed
        or of another schema or γ, and then changes nothing."""
        if state.get("schema") != self.STATE_SCHEMA:
            raise ValueError(f"learner state schema {state.get('schema')!r}, expected {self.STATE_SCHEMA}")
        gamma = self.config.num_speculative_tokens
        if state.get("num_speculative_tokens") != gamma:
            raise ValueError(f"learner state for γ = {state.get('num_speculative_tokens')!r}, this gateway has {gamma}")
        cap = self.config.prior_weight if max_weight is None else max_weight
        tps, frac = (1.0, gamma + 1.0), (0.0, 1.0)
        per_class = {name: {_class_key(k): _ewma_in(v, cap, lo_hi) for k, v in _table(state, name).items()}
                     for name, lo_hi in (("tokens_per_step", tps), ("output_tokens", (0.0, 1e7)),
                                         ("output_fraction", frac))}
        buckets = {k: _ewma_in(v, cap, tps) for k, v in _table(state, "bucket_tokens_per_step").items()}
        backend = _ewma_in(state.get("backend_tokens_per_step"), cap, tps)
        prefill = {r: _ewma_in(_table(state, "prefill").get(r), cap, (0.0, 1.0)) for r in ROLES}
        interference = {r: _ewma_in(_table(state, "interference").get(r), cap, (0.0, 1.5)) for r in ROLES}
        steps = {r: _step_in(_table(state, "steps").get(r), self.config.priors[r]) for r in ROLES}
        self._tokens_per_step, self._output_tokens, self._output_fraction = (
            per_class["tokens_per_step"], per_class["output_tokens"], per_class["output_fraction"])
        self._bucket_tokens_per_step, self._backend_tokens_per_step = buckets, backend
        self._prefill, self._interference, self._steps = prefill, interference, steps
        self._models = {role: fit.model() for role, fit in self._steps.items()}
        self._kappa = {role: self._shrunk_interference(role) for role in ROLES}
        self._prefill_s = {role: self._shrunk_prefill(role) for role in ROLES}


def _asdict(obj: StepModel | ClassEstimate) -> dict[str, object]:
    return {name: getattr(obj, name) for name in obj.__slots__}


# --- persistence helpers (Learner.export_state / import_state)
_MAX_IMPORTED_KEYS = 1024  # a state file or a peer cannot grow the learner without bound


def _ewma_out(e: Ewma) -> list[float]:
    return [e.value, e.weight, e.count]


def _number(raw: object, lo: float, hi: float) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw != raw or not lo <= raw <= hi:
        raise ValueError(f"learner state value {raw!r} outside [{lo}, {hi}]")
    return float(raw)


def _ewma_in(raw: object, cap: float, lo_hi: tuple[float, float]) -> Ewma:
    if not isinstance(raw, list) or len(raw) != 3:
        raise ValueError(f"learner state entry {raw!r} is not [value, weight, count]")
    weight = min(_number(raw[1], 0.0, 1e12), cap)
    return Ewma(_number(raw[0], *lo_hi), weight, int(_number(raw[2], 0, 1e12)))


def _table(state: dict[str, object], name: str) -> dict[str, object]:
    table = state.get(name)
    if not isinstance(table, dict) or len(table) > _MAX_IMPORTED_KEYS or not all(isinstance(k, str) for k in table):
        raise ValueError(f"learner state {name!r} is not a table of at most {_MAX_IMPORTED_KEYS} entries")
    return table


def _class_key(key: str) -> tuple[str, str]:
    cls, sep, bucket = key.partition("/")
    if not sep or not cls or not bucket or len(key) > 64:
        raise ValueError(f"learner state key {key!r} is not class/bucket")
    return cls, bucket


def _step_in(raw: object, prior: StepModel) -> StepFit:
    """An imported step model as a fit that starts at it with the prior's uncertainty."""
    if not isinstance(raw, dict):
        raise ValueError(f"learner state step model {raw!r} is not a table")
    fit = StepFit.from_prior(prior)
    fit.theta = [_number(raw.get("base_s"), 0.0, 10.0) / fit.scale_s,
                 _number(raw.get("per_request_s"), 0.0, 10.0) / fit.scale_s]
    fit.count = int(_number(raw.get("count"), 0, 1e12))
    return fit
