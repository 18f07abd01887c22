"""Pure online estimates the adaptive policy needs: no I/O, no clock; observations come in as data.

- tokens per decode step on the speculative server, per (class, temperature bucket), from each streamed
  speculative response (each vLLM chunk is one engine step; the first is the prefill's one token), the ratio of
  tokens to steps over the class's responses (`_observe_acceptance`), shrunk toward the temperature bucket, then the
  prior (or the backend-wide tokens per step of the scraped `vllm:` counters, where lower), with a posterior spread;
- output tokens per (class, temperature bucket): the natural length in log space (one observation moves it at most
  2x), and the fraction of `max_tokens` used, learned only where `max_tokens` is within reach of the natural length;
- step time vs load per role (`StepModel`), fitted by recursive least squares with forgetting on
  features [1, load_self] from steps no co-runner shared, and κ, the share of a co-runner's step that a step
  waits for, from the steps one did share. Each observed step is clipped to a factor of three of the
  current model; a warm-up response (a backend's first after it started) teaches it only as an upper bound;
- prefill seconds per prompt token, per role (also clipped), shrunk toward the other role's (an idle server's read its
  prior, 40 µs, beside the measured 27-33: the mix priced it 20% dearer), learned only from requests that started on
  a quiet GPU (`PREFILL_QUIET_LOAD`): under a burst time to first token is mostly the wait behind other prefills (an
  H200 at c = 48: the baseline's 3.4x the speculative server's); a ratio of sums, each response weighing its tokens
  (`PREFILL_WEIGHT_MAX`). Also a line through time to first token on [1, prompt tokens]: its slope is a token's cost.
Every estimate starts at a prior and forgets old observations geometrically (`forgetting` per update).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from gateway.core.acceptance_cells import MAX_RESPONSE_WEIGHT, acceptance_rate, decode_tokens_per_step
from gateway.core.costmodel import OTHER_ROLE, ROLES, CoRunner, Role, StepModel, step_s
from gateway.core.decode_stall import DecodeStall, SharedStall
from gateway.core.ewma import Ewma as Ewma  # re-exported: learner_state reads and writes it
from gateway.core.observation import Observation as Observation  # re-exported: the gateway builds them
from gateway.core.per_request import PerRequest
from gateway.core.stepfit import StepFit, tied_models

PREFILL_SHARE_MAX = 0.5  # of a decode, the most that other requests' prefill may be said to have taken
CLIP_FACTOR = 3.0  # an observed step or prefill moves the model as if it were at most this far off
PREFILL_QUIET_LOAD = 4.0  # requests on the GPU (the observed one included) up to which TTFT teaches prefill speed
PREFILL_WEIGHT_MAX = 4.0  # a response's weight in the prefill speed: its tokens over the mean response's, at most this
MAX_OUTPUT_TOKENS = 2**20  # the longest natural output length an estimate may say (exp() of a log stays finite)
_LOG_MAX_OUTPUT = math.log(MAX_OUTPUT_TOKENS)
FRACTION_REACH = 8.0  # a max_tokens above this many times the natural length says nothing about the request


@dataclass(frozen=True, slots=True)
class LearnerConfig:
    priors: dict[Role, StepModel]
    prior_interference: dict[Role, float]
    forgetting: float
    prior_weight: float
    prior_tokens_per_step: float
    prior_output_tokens: float
    num_speculative_tokens: int
    prior_prefill_s_per_token: float
    slope_tie: float  # how far apart the two roles' per-request step growth may be, relative (see stepfit)
    prior_tokens_per_step_sd: float  # spread of the acceptance prior, in tokens per step
    prior_sampled_scale: float = 1.0  # the prior's gain over 1 token a step, and its spread, in the "high" bucket
    base_tie: float = 0.5  # the same for the step at batch 1 (host time, which differs by model: see stepfit)
    base_ratio: float | None = None  # speculative / baseline step at batch 1 an idle role borrows at (None: priors')
    acceptance_by_kind: bool = False  # per-request acceptance cells by copy kind first (`core.acceptance_cells`)
    stall_from_load: float = math.inf  # a shared GPU's saturated steps (`SharedStall`) above this load (inf: off)


@dataclass(frozen=True, slots=True)
class ClassEstimate:
    tokens_per_step: float
    tokens_per_step_sd: float
    acceptance_rate: float
    output_tokens: float
    speculative_observations: int
    observations: int


def _clip(x: float, ref: float) -> float:
    return min(max(x, ref / CLIP_FACTOR), ref * CLIP_FACTOR)


class Learner:
    """Online estimates per (class, temperature bucket) and per role."""

    def __init__(self, config: LearnerConfig) -> None:
        self.config = config
        self._tokens_per_step: dict[tuple[str, str], Ewma] = {}
        self._bucket_tokens_per_step: dict[str, Ewma] = {}
        self._log_output: dict[tuple[str, str], Ewma] = {}
        self._output_fraction: dict[tuple[str, str], Ewma] = {}
        self._backend_tokens_per_step = Ewma(config.prior_tokens_per_step)
        self.served_acceptance = 0  # the speculative server's own answers read for acceptance (a trial is judged on)
        self._steps = {role: StepFit.from_prior(config.priors[role]) for role in ROLES}
        self._prefill = {role: Ewma(config.prior_prefill_s_per_token) for role in ROLES}
        self._prefill_tokens = Ewma(0.0)  # tokens per observed prefill: the unit of its weight
        # time to first token (less one step) on [1, prompt tokens]: the slope is a prompt token's marginal cost
        self._prefill_line = {role: StepFit.from_prior(StepModel(config.priors[role].base_s,
                                                                 config.prior_prefill_s_per_token)) for role in ROLES}
        self._fitted = {role: fit.model() for role, fit in self._steps.items()}  # observations read these, predictions
        # read these
        self._models = tied_models(self._steps, config.slope_tie, config.priors, config.base_tie, config.base_ratio)
        self._interference = {role: Ewma(config.prior_interference[role]) for role in ROLES}
        # the decision path reads these every request; they change only in `observe`
        self._kappa = {role: self._shrunk_interference(role) for role in ROLES}
        self._prefill_s = {role: self._shrunk_prefill(role) for role in ROLES}
        # output length and acceptance per request, from what it says (`core.per_request`)
        self.per_request = PerRequest(config.prior_output_tokens, config.forgetting,
                                      config.num_speculative_tokens + 1.0, config.acceptance_by_kind)
        self.stall = DecodeStall(config.forgetting)  # others' prefill inside a decode, on a GPU of its own
        self.shared_stall = SharedStall(config.forgetting, config.stall_from_load)  # ... on a saturated shared GPU

    # --- estimates used on the decision path (cheap lookups)
    def step_model(self, role: Role) -> StepModel:
        return self._models[role]

    def interference(self, role: Role) -> float:
        """κ of `role`: the share of a co-runner's step that its step waits for when both have work."""
        return self._kappa[role]

    def prefill_s_per_token(self, role: Role) -> float:
        return self._prefill_s[role]

    def _shrunk_interference(self, role: Role) -> float:
        kappa = self._interference[role].shrunk(self.config.prior_interference[role], self.config.prior_weight)
        return min(max(kappa, 0.0), 1.2)

    def _shrunk_prefill(self, role: Role) -> float:  # toward the other role's (the same model on the same GPU)
        pw, other = self.config.prior_weight, self._prefill[OTHER_ROLE[role]]
        return self._prefill[role].shrunk(other.shrunk(self.config.prior_prefill_s_per_token, pw), pw)

    def _prefill_marginal_s(self, role: Role) -> float:
        """A prompt token's marginal prefill time: the prefill line's slope, at most the mean per token."""
        return min(self._prefill_line[role].model().per_request_s, self._prefill_s[role])

    def backend_tokens_per_step(self) -> float:
        return self._backend_tokens_per_step.shrunk(self.config.prior_tokens_per_step, self.config.prior_weight)

    def tokens_per_step(self, task_class: str, bucket: str) -> float:
        """Shrunk in two levels: (class, bucket) toward the bucket over all classes (temperature is the
        strongest single predictor of acceptance), which is shrunk toward the prior, or the backend-wide
        value where that is lower. Never toward a higher backend-wide value: it averages the requests the
        policy chose to send there, so it overstates every other bucket."""
        return self.tokens_per_step_posterior(task_class, bucket)[0]

    def tokens_per_step_posterior(self, task_class: str, bucket: str) -> tuple[float, float]:
        """(mean, standard deviation of the mean) of tokens per step for this (class, bucket)."""
        pw = self.config.prior_weight
        prior = min(self.backend_tokens_per_step(), self.config.prior_tokens_per_step)
        sd0 = self.config.prior_tokens_per_step_sd
        if bucket == "high":  # a sample must match the draft: acceptance falls with temperature
            scale = self.config.prior_sampled_scale
            prior, sd0 = 1.0 + (prior - 1.0) * scale, sd0 * scale
        level = self._bucket_tokens_per_step.get(bucket)
        if level is not None:
            prior = level.shrunk(prior, pw)
        est = self._tokens_per_step.get((task_class, bucket))
        if est is None:  # a class not seen yet is like the others of its bucket, as far as they agree
            unseen = sd0 / math.sqrt(max(pw, 1.0))
            if level is None:
                return prior, unseen
            level_sd = math.sqrt(max(level.var, 0.04) * level.weight + sd0 * sd0 * pw) / (level.weight + pw)
            return prior, min(unseen, math.sqrt(level.var + level_sd * level_sd))
        spread = math.sqrt(max(est.var, 0.04) * est.weight + sd0 * sd0 * pw) / (est.weight + pw)
        return est.shrunk(prior, pw), spread

    def natural_output_tokens(self, task_class: str, bucket: str) -> float:
        est = self._log_output.get((task_class, bucket))
        prior = math.log(self.config.prior_output_tokens)
        logged = prior if est is None else est.shrunk(prior, self.config.prior_weight)
        if not math.isfinite(logged):
            logged = prior
        return math.exp(min(max(logged, 0.0), _LOG_MAX_OUTPUT))  # bounded: exp() never overflows

    def output_tokens(self, task_class: str, bucket: str, max_tokens: int, max_tokens_given: bool = False) -> float:
        """Expected completion tokens: the learned fraction of `max_tokens` when the client set one within
        reach of what this class produces (apps size max_tokens to the task), else the natural length;
        never above `max_tokens`."""
        natural = self.natural_output_tokens(task_class, bucket)
        if max_tokens_given and max_tokens <= FRACTION_REACH * natural:
            frac = self._output_fraction.get((task_class, bucket))
            if frac is not None:  # geometric mean: the median request, not one pulled up by a long tail
                return max(1.0, math.exp(min(frac.shrunk(0.0, 1.0), 0.0)) * max_tokens)
        return max(1.0, min(natural, float(max_tokens)))

    def bucket_speculative_observations(self, bucket: str) -> int:
        est = self._bucket_tokens_per_step.get(bucket)
        return 0 if est is None else est.count

    def step_observations(self, role: Role) -> int:
        """Responses that taught `role`'s own step model (0: it is borrowed from the other role's, or its prior)."""
        return self._steps[role].count

    def speculative_observations(self, task_class: str, bucket: str) -> int:
        est = self._tokens_per_step.get((task_class, bucket))
        return 0 if est is None else est.count

    # --- updates (off the decision path)
    def observe(self, obs: Observation) -> None:
        if not _plausible(obs):  # one NaN or infinity would stay in every estimate it touched, for good
            return
        key = (obs.task_class, obs.bucket)
        if obs.completion_tokens > 0:
            self._observe_output(key, obs)
            self.per_request.observe_output(obs.task_class, obs.bucket, obs.max_tokens, obs.prompt_tokens,
                                            obs.structured, obs.completion_tokens)
        steps = obs.steps
        if obs.role == "baseline" and steps is None:
            steps = obs.completion_tokens
        early = obs.read_early
        if obs.role == "speculative" and steps and early is None:
            self.served_acceptance += 1
            self._observe_both(key, obs.prompt_tokens, obs.completion_tokens, steps, obs.family, obs.temperature,
                               obs.copy_kind, 1.0, obs.predicted_tokens_per_step)
        elif obs.role == "speculative" and steps and early is not None and steps > early[1]:  # the rest of it
            # + one token in one step: `decode_tokens_per_step` takes a first chunk for the prefill's
            self._observe_both(key, obs.prompt_tokens, obs.completion_tokens - early[0] + 1, steps - early[1] + 1,
                               obs.family, obs.temperature, obs.copy_kind, 1.0)
        if obs.warmup:
            self._observe_warmup_step(obs, steps)
            return
        step = None
        if steps is not None and steps >= 3 and obs.e2e_s > obs.ttft_s:
            net = self._decode_s(obs)
            step = self._observe_step(obs, net / (steps - 1))
            decode = obs.e2e_s - obs.ttft_s
            if not obs.co_runners:  # what it netted out, the prediction adds back (`core.decode_stall`)
                self.stall.observe(obs.role, decode, decode - net)
            elif not any(load > 0 for _, load in obs.co_runners):  # a pair, the other idle: what the model leaves
                self.shared_stall.observe(decode, steps - 1, obs.load_self, self._models[obs.role].own_s(obs.load_self))
        if (obs.prompt_tokens - obs.cached_tokens >= 64
                and obs.load_self + sum(load for _, load in obs.co_runners) <= PREFILL_QUIET_LOAD):
            self._observe_prefill(obs, step)

    def _decode_s(self, obs: Observation) -> float:
        """The request's decode time without the prefill of requests that arrived during it (chunked prefill runs
        other prompts inside its steps; left in, that work grows with the load and bent the step's fit), each chunk
        at a prompt token's marginal cost beyond the step it rides on: on a shared GPU at most `PREFILL_SHARE_MAX` of
        the decode, on a GPU of its own down to its steps at batch 1. Why: docs/routing.md, "The learner"."""
        decode = obs.e2e_s - obs.ttft_s
        if obs.prefill_during_decode <= 0:
            return decode
        ridden = obs.prefills_during_decode * self._models["baseline"].base_s
        prefill = max(self._prefill_marginal_s(obs.role) * obs.prefill_during_decode - ridden, 0.0)
        own_gpu_floor = min(decode, ((obs.steps or 1) - 1) * self._models[obs.role].own_s(1.0))
        return max(decode - prefill, (1.0 - PREFILL_SHARE_MAX) * decode if obs.co_runners else own_gpu_floor)

    def _observe_output(self, key: tuple[str, str], obs: Observation) -> None:
        f = self.config.forgetting
        natural = self.natural_output_tokens(*key)
        if obs.max_tokens and obs.max_tokens <= FRACTION_REACH * natural:
            self._output_fraction.setdefault(key, Ewma(0.0)).update(
                math.log(min(obs.completion_tokens / obs.max_tokens, 1.0)), f)
        logged = math.log(obs.completion_tokens)
        ref = math.log(natural)
        bounded = min(max(logged, ref - math.log(2.0)), ref + math.log(2.0))
        self._log_output.setdefault(key, Ewma(math.log(self.config.prior_output_tokens))).update(bounded, f)

    def _observe_both(self, key: tuple[str, str], prompt_tokens: int, tokens: int, steps: int, family: int | None,
                      temperature: float, copy_kind: str, scale: float, predicted: float | None = None) -> None:
        """`tokens` in `steps` on the speculative server: its (class, bucket)'s acceptance, then the per-request cells'
        (against what the class said before it) and their calibration (`predicted`: the estimate it was routed on)."""
        estimate = self.tokens_per_step(*key)
        self._observe_acceptance(key, key[1], tokens, steps, scale)
        self.per_request.observe_acceptance(key[0], key[1], prompt_tokens, tokens, steps, estimate, family,
                                            temperature, copy_kind, scale, predicted)

    def _observe_acceptance(self, key: tuple[str, str], bucket: str, tokens: int, steps: int,
                            scale: float = 1.0) -> None:
        """Tokens per *decode* step (the cost model's unit), as a ratio of sums: each response weighs its decode steps
        (acceptance grows with the answer's length; capped at 64 steps it read 1.40 where the fleet delivered 1.65:
        docs/routing.md, "The learner")."""
        f = self.config.forgetting
        tps, decode_steps = decode_tokens_per_step(tokens, steps, self.config.num_speculative_tokens)
        weight = min(decode_steps / 16.0, MAX_RESPONSE_WEIGHT) * scale  # scale: a shadow read's (`observe_shadow`)
        self._tokens_per_step.setdefault(key, Ewma(self.config.prior_tokens_per_step)).update(tps, f, w=weight)
        # The bucket's level stands for classes not seen yet: one long response of one class (a SQL probe at 3.5
        # tokens per step) must not outweigh the prior for all of them, so each response counts once there.
        self._bucket_tokens_per_step.setdefault(bucket, Ewma(self.config.prior_tokens_per_step)).update(
            tps, f, w=min(weight, 1.0))

    def observe_early(self, task_class: str, bucket: str, prompt_tokens: int, tokens: int, steps: int,
                      family: int | None = None, temperature: float = 0.0, kind: str = "new") -> None:
        """A running answer of the speculative server read for acceptance before it ends (a trial is judged on it:
        `gateway.migrate`): its first `tokens` in `steps` engine steps; the rest is read when it ends
        (`Observation.read_early`). It counts as one of the server's answers read."""
        if steps < 2 or tokens < 1:
            return
        self.served_acceptance += 1
        self._observe_both((task_class, bucket), prompt_tokens, tokens, steps, family, temperature, kind, 1.0)

    def observe_shadow(self, task_class: str, bucket: str, prompt_tokens: int, tokens_per_step: float, steps: int,
                       scale: float, family: int | None = None, temperature: float = 0.0, kind: str = "new") -> None:
        """Acceptance evidence without the speculative server: the tokens per step it would have reached on a
        response another server gave (`core.shadow_lookup`, calibrated), at `scale` of a served response's weight."""
        if steps <= 0 or scale <= 0 or not math.isfinite(tokens_per_step):
            return
        self._observe_both((task_class, bucket), prompt_tokens, round(tokens_per_step * steps), steps, family,
                           temperature, kind, scale)

    def _observe_warmup_step(self, obs: Observation, steps: int | None) -> None:
        """A warm-up response (compiles, cold caches) can only overstate the step: it teaches it only where it reads
        faster than the fit, an upper bound. The trained 160M pair (H200, 2026-12-05): its two baseline responses
        before the regime's first switch were warm-up, so the baseline stayed guessed at twice its real step."""
        if steps is None or steps < 3 or obs.e2e_s <= obs.ttft_s or any(load > 0 for _, load in obs.co_runners):
            return
        observed = self._decode_s(obs) / (steps - 1)
        if observed < self._fitted[obs.role].own_s(obs.load_self):
            self._observe_step(obs, observed)

    def _co_runners(self, obs: Observation) -> list[CoRunner]:
        return [CoRunner(self._fitted[role], load, 0.0) for role, load in obs.co_runners]

    def _observe_step(self, obs: Observation, observed: float) -> float:
        """Fit the own-step model on steps nobody shared, κ on steps that were shared; return the step."""
        f, role, co = self.config.forgetting, obs.role, self._co_runners(obs)
        waits = sum(c.model.own_s(c.load) for c in co if c.load > 0)
        own = self._fitted[role].own_s(obs.load_self)
        if waits > 0:  # what the step waited for, beyond its own work: the interference share
            observed = _clip(observed, own + self._kappa[role] * waits)
            self._interference[role].update(min(max((observed - own) / waits, 0.0), 1.5), f)
            self._kappa[role] = self._shrunk_interference(role)
        elif not (obs.co_runners and obs.load_self > self.config.stall_from_load):  # above: the stall's (`SharedStall`)
            observed = _clip(observed, own)
            self._fit_own_step(role, obs.load_self, observed, bool(obs.co_runners))
        return observed

    def observe_quiet_step(self, role: Role, step_s: float) -> None:
        """A step measured with its server alone on its GPU at batch 1 (`gateway.quiet_steps`, at start-up)."""
        if math.isfinite(step_s) and step_s > 0:
            self._fit_own_step(role, 1.0, _clip(step_s, self._fitted[role].own_s(1.0)), True)

    def _fit_own_step(self, role: Role, load: float, observed: float, shared_gpu: bool) -> None:
        f = self.config.forgetting
        self._steps[role].update(load, observed, f)
        if shared_gpu:  # the other role on the same GPU: what its fit knows grows old
            self._steps[OTHER_ROLE[role]].age(f)
        self._fitted[role] = self._steps[role].model()
        self._models = tied_models(self._steps, self.config.slope_tie, self.config.priors, self.config.base_tie,
                                   self.config.base_ratio)

    def _observe_prefill(self, obs: Observation, step: float | None) -> None:
        role = obs.role
        if step is None:
            step = step_s(self._fitted[role], obs.load_self, self._co_runners(obs), self._kappa[role])
        # its own uncached prompt and those queued ahead of it: else the wait read as slow prefill (mooncake-a, 2 + 2:
        # 5e-5 s a token against the emulator's ~2.5e-5, TTFT predicted 1.24 s against 0.71 s observed)
        prompt = obs.prompt_tokens - obs.cached_tokens + max(obs.queued_prefill_tokens, 0.0)
        first = max(obs.ttft_s - step, 0.0)
        # Weighed by its tokens: in a mean of ratios the time every response pays (HTTP hops, the step it arrives in;
        # 0.03-0.05 s) counted 30x on 1k tokens, and Mooncake (1-30k) read 3.2e-5 s a token, the emulator's 2.3e-5.
        mean = self._prefill_tokens.value if self._prefill_tokens.weight > 0 else prompt
        self._prefill_tokens.update(prompt, self.config.forgetting)
        self._prefill[role].update(_clip(first / prompt, self._prefill_s[role]), self.config.forgetting,
                                   w=min(prompt / max(mean, 1.0), PREFILL_WEIGHT_MAX))
        self._prefill_s = {r: self._shrunk_prefill(r) for r in ROLES}
        line = self._prefill_line[role]
        line.update(prompt, _clip(first, line.model().own_s(prompt)), self.config.forgetting)

    def observe_backend_acceptance(self, tokens_per_step: float, drafts: float) -> None:
        """Counter deltas of one scrape: output tokens per engine step (`SpecDelta.tokens_per_step`), weighted
        by the `drafts` draft rounds behind it."""
        if drafts > 0 and math.isfinite(drafts) and math.isfinite(tokens_per_step):
            weight = min(drafts / 64.0, 8.0)
            tps = min(max(tokens_per_step, 1.0), self.config.num_speculative_tokens + 1.0)
            self._backend_tokens_per_step.update(tps, self.config.forgetting, w=weight)

    # --- introspection
    def class_estimates(self) -> dict[tuple[str, str], ClassEstimate]:
        keys = set(self._tokens_per_step) | set(self._log_output)
        out = {}
        for task_class, bucket in sorted(keys):
            tps, sd = self.tokens_per_step_posterior(task_class, bucket)
            outputs = self._log_output.get((task_class, bucket))
            out[(task_class, bucket)] = ClassEstimate(
                tps, sd, acceptance_rate(tps, self.config.num_speculative_tokens),
                self.natural_output_tokens(task_class, bucket), self.speculative_observations(task_class, bucket),
                0 if outputs is None else outputs.count)
        return out

    def state(self) -> dict[str, object]:
        return {
            "backend_tokens_per_step": self.backend_tokens_per_step(),
            "step_models": {r: {**_asdict(self._models[r]), "observations": self._steps[r].count} for r in ROLES},
            "prefill_s_per_token": {role: self.prefill_s_per_token(role) for role in ROLES},
            "prefill_marginal_s_per_token": {role: self._prefill_marginal_s(role) for role in ROLES},
            "interference": {role: self.interference(role) for role in ROLES},
            "decode_stall_share": {role: self.stall.share(role) for role in ROLES},
            "shared_stall_s_per_request": self.shared_stall.per_request_s(),
            **self.per_request.state(),
            "classes": {f"{c}/{b}": _asdict(est) for (c, b), est in self.class_estimates().items()},
        }


def _plausible(obs: Observation) -> bool:
    """Every time and load finite and not negative, every count not negative."""
    reals = (obs.ttft_s, obs.e2e_s, obs.load_self, obs.queued_prefill_tokens, *(load for _, load in obs.co_runners))
    counts = (obs.prompt_tokens, obs.completion_tokens, obs.steps or 0, obs.prefill_during_decode,
              obs.prefills_during_decode)
    return all(math.isfinite(x) and x >= 0 for x in reals) and all(n >= 0 for n in counts)


def _asdict(obj: StepModel | ClassEstimate) -> dict[str, object]:
    return obj._asdict() if isinstance(obj, StepModel) else {f.name: getattr(obj, f.name) for f in fields(obj)}
