"""Each role's own step time vs its batch, fitted online, with the two roles' batch growth tied.

`StepFit` is recursive least squares (Kalman form, with forgetting) of one server's step time on [1, load].
A server's per-request growth is only observable while it carries a batch, and on a shared GPU one server
carries the traffic at a time: the idle one's growth stays at its prior, however wrong, and the regime
choice compares a measured server with a guessed one (the guess decided which way the regime went). The
two roles run the same model on the same GPU, so their growth per running request moves together (the same
weights, the same attention over each request's KV cache, the same GPU speed), but not at the same level: a
speculative step also verifies each request's drafted tokens (measured on an H200 with n-gram γ = 4: 1.4x the
baseline's growth; a fixed γ pads undrafted decodes too). `tied_models` therefore pulls each role's growth
toward the other's *scaled by the ratio of their priors*, in proportion to how much better measured the other is:
an unmeasured role borrows the measured one's (at the priors' ratio), two measured roles keep their own.

The step at batch 1 is borrowed at the roles' *measured* ratio once both have run quiet steps (`QUIET_LOAD`):
a fit with forgetting follows the tangent at the load it is fed, so the serving role's intercept drops under load
(mixed-phases: the n-gram server's 6.6 ms read 6.0 at 8 running) while the idle one keeps the intercept of the
light load it last saw; their quiet steps keep the ratio (emulated H200: 0.70 at 1 running and at 8, the priors'
0.67; the trained 160M pair 0.38). On a shared GPU an idle role's fit also ages with the other's updates
(`StepFit.age`; the learner): the borrowed tangent, fresh, outweighs an own one measured long ago at another load
(a small effect next to the measured ratio). The quiet steps are not in the exported state: after a restart the
priors' ratio holds until both roles have run two quiet steps again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gateway.core.costmodel import OTHER_ROLE, Role, StepModel

# Variance of the step at batch 1, in units of the prior's, at most (sd ~0.14x): every load teaches it, but a server
# that only ever runs large batches cannot tell its intercept from its growth, and an unbounded one drifted to the
# 0.1x floor on mixed-high (0.75 ms against ~6.6 ms) while the growth took the rest.
INTERCEPT_VAR = 0.02
SLOPE_VAR = 0.05**2  # the growth's variance cap, in the same units
QUIET_LOAD = 2.0  # running requests up to which a step reads a server's speed at batch 1
QUIET_MIN_STEPS = 2  # quiet steps each role needs before their ratio replaces the priors'


@dataclass(slots=True)
class StepFit:
    """Recursive least squares (Kalman form, with forgetting) of one server's own step time on [1, load],
    in units of its prior base step time."""

    theta: list[float]
    p: list[list[float]]
    scale_s: float
    noise: float = 0.05
    count: int = 0
    quiet_s: float = 0.0  # forgetting mean of quiet steps (net of the fit's growth): the step at batch 1
    quiet_w: float = 0.0
    quiet_n: int = 0  # quiet steps seen (a count: with forgetting, two steps weigh 1 + forgetting < 2)

    @classmethod
    def from_prior(cls, prior: StepModel) -> StepFit:
        scale = prior.base_s
        return cls(theta=[1.0, prior.per_request_s / scale], p=[[INTERCEPT_VAR, 0.0], [0.0, 0.02**2]], scale_s=scale)

    def update(self, load: float, step_s: float, forgetting: float) -> None:
        """One Kalman step with x = [1, load] (written out for two dimensions: it runs once per response)."""
        (p00, p01), (p10, p11) = self.p
        px0, px1 = p00 + p01 * load, p10 + p11 * load
        denom = self.noise + px0 + load * px1
        g0, g1 = px0 / denom, px1 / denom
        t0, t1 = self.theta
        err = step_s / self.scale_s - (t0 + t1 * load)
        self.theta = [t0 + g0 * err, t1 + g1 * err]
        self._set_p(p00 - g0 * px0, p01 - g0 * px1, p10 - g1 * px0, p11 - g1 * px1, forgetting)
        self.count += 1
        if load <= QUIET_LOAD:
            self.quiet_w = self.quiet_w * forgetting + 1.0
            self.quiet_n += 1
            self.quiet_s += (step_s - max(self.theta[1], 0.0) * self.scale_s * load - self.quiet_s) / self.quiet_w

    def age(self, forgetting: float) -> None:
        """The other role on the GPU was measured: what this fit knows grows as old by one update."""
        (p00, p01), (p10, p11) = self.p
        self._set_p(p00, p01, p10, p11, forgetting)

    def _set_p(self, p00: float, p01: float, p10: float, p11: float, forgetting: float) -> None:
        p00, p01, p10, p11 = p00 / forgetting, p01 / forgetting, p10 / forgetting, p11 / forgetting
        # bounded: forgetting without excitation cannot wind up
        if p00 > INTERCEPT_VAR:
            k = (INTERCEPT_VAR / p00) ** 0.5
            p00, p01, p10 = p00 * k * k, p01 * k, p10 * k
        if p11 > SLOPE_VAR:
            k = (SLOPE_VAR / p11) ** 0.5
            p11, p01, p10 = p11 * k * k, p01 * k, p10 * k
        self.p = [[p00, p01], [p10, p11]]

    def model(self) -> StepModel:
        base, per_request = self.theta[0] * self.scale_s, max(self.theta[1], 0.0) * self.scale_s
        return StepModel(max(base, 0.1 * self.scale_s), per_request)

    def variances_s2(self) -> tuple[float, float]:
        """Variances of the step at batch 1 and of the per-request growth, in seconds squared."""
        scale2 = self.scale_s * self.scale_s
        return self.p[0][0] * scale2, self.p[1][1] * scale2


def tied_models(fits: Mapping[Role, StepFit], tie: float, priors: Mapping[Role, StepModel],
                base_tie: float | None = None, base_ratio: float | None = None) -> dict[Role, StepModel]:
    """Each role's model with its step at batch 1 and its per-request growth each combined, precision-weighted,
    with the other role's scaled by the priors' ratio; what is borrowed counts as uncertain by the other's own
    variance plus (`tie` × the larger value)², the room the ratio is given to differ from the priors'. (The GPU's
    speed is one for both: a measured speculative server tells how fast the idle baseline beside it would be.)
    Once a role has responses of its own, its step at batch 1 gets the wider room `base_tie` (default: `tie`): that
    step is mostly host time, and the speculative server's extra host time (proposer, rejection sampler) is a larger
    share of a small model's step (the 160M target trained on 2026-12-05: 2.6x the baseline's step against the 8B's
    1.4x); with 10% room three baseline responses could not move it off the borrowed 3.5 ms towards its own 2.0 ms.
    Once both roles have quiet steps, the step at batch 1 is borrowed at their measured ratio, with the room `tie`.
    A speculative server that has served nothing borrows the measured baseline's step at batch 1 outright, at
    `base_ratio` (None: the priors' ratio, weighed as above), from the baseline's quiet steps where it has them: its own
    prior is of another machine, and the baseline's answers measure this GPU's speed (weighed against a prior 14% above
    CALIBRATION.md's, the idle n-gram server's step read 1.55x a measured baseline's, the emulated pair's is 1.41x).
    Its growth is weighed as before: on a GPU saturated by prompts the baseline's fit bends (3.2 ms + 1.03 ms a request
    on the Azure code burst), and borrowed outright it priced the n-gram server at 1.5 ms a running request, kept the
    burst on the baseline and read 1.059x the better static instead of 0.999x. Not the other way: a speculative step
    is the baseline's plus a drafter's, whose share varies by drafter and model (a 4x step: a baseline whose only
    answers were warm-up would borrow 2.8x its step and look dearer than a draft model it beats)."""
    models = {role: fit.model() for role, fit in fits.items()}
    out: dict[Role, StepModel] = {}
    for role, fit in fits.items():
        other = OTHER_ROLE[role]
        if fits[other].count == 0:  # a prior is not evidence about the other role
            out[role] = models[role]
            continue
        own, theirs = models[role], models[other]
        (own_base_var, own_slope_var), (their_base_var, their_slope_var) = (fit.variances_s2(),
                                                                            fits[other].variances_s2())
        base_scale, measured = _base_ratio(fit, fits[other], priors[role].base_s, priors[other].base_s)
        slope_scale = _ratio(priors[role].per_request_s, priors[other].per_request_s)
        slope = _combine(own.per_request_s, own_slope_var, theirs.per_request_s * slope_scale,
                         their_slope_var * slope_scale**2, tie)
        if role == "speculative" and fit.count == 0 and base_ratio is not None:  # see the docstring
            quiet = fits[other].quiet_s if fits[other].quiet_n >= QUIET_MIN_STEPS else theirs.base_s
            out[role] = StepModel(quiet * (base_scale if measured else base_ratio), slope)
            continue
        base = _combine(own.base_s, own_base_var, theirs.base_s * base_scale, their_base_var * base_scale**2,
                        tie if base_tie is None or fit.count == 0 or measured else base_tie)
        out[role] = StepModel(base, slope)
    return out


def _combine(own: float, own_var: float, borrowed: float, borrowed_var: float, tie: float) -> float:
    room = tie * max(own, borrowed)
    other_var = borrowed_var + room * room
    if other_var <= 0:
        return own
    w = (1.0 / max(own_var, 1e-18)) / (1.0 / max(own_var, 1e-18) + 1.0 / other_var)
    return w * own + (1.0 - w) * borrowed


def _base_ratio(fit: StepFit, other: StepFit, role_prior: float, other_prior: float) -> tuple[float, bool]:
    """The role's step at batch 1 over the other's: measured from both roles' quiet steps, else the priors'."""
    if min(fit.quiet_n, other.quiet_n) >= QUIET_MIN_STEPS and fit.quiet_s > 0 and other.quiet_s > 0:
        return fit.quiet_s / other.quiet_s, True
    return _ratio(role_prior, other_prior), False


def _ratio(role_prior: float, other_prior: float) -> float:
    """The role's prior over the other's (1 where either is not positive)."""
    return role_prior / other_prior if role_prior > 0 and other_prior > 0 else 1.0
