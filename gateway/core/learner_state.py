"""The learner's state as plain JSON data: `export_state` and `import_state` (what `persist` saves and peers
share). A state another process learned is read as a prior here: every estimate's weight is capped."""

from __future__ import annotations

import math

from gateway.core.costmodel import ROLES
from gateway.core.learner import Ewma, Learner
from gateway.core.stepfit import tied_models

STATE_VERSION = 1


def _ewma_out(e: Ewma) -> list[float]:
    return [e.value, e.weight, float(e.count), e.var]


def _ewma_in(raw: object, max_weight: float) -> Ewma:
    """An exported estimate, its weight capped: what another process learned is a prior here, not a lock-in."""
    if not isinstance(raw, list) or len(raw) != 4 or not all(isinstance(x, int | float) for x in raw):
        raise ValueError(f"bad estimate {raw!r}")
    value, weight, count, var = (float(x) for x in raw)
    if not all(math.isfinite(x) for x in (value, weight, var)) or weight < 0 or var < 0:
        raise ValueError(f"bad estimate {raw!r}")
    return Ewma(value, min(weight, max_weight), int(count), var)


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


def import_state(lrn: Learner, state: dict[str, object], max_weight: float) -> None:
    """Load `export_state` output into a fresh learner, every estimate's weight capped at `max_weight`.
    Raises ValueError (and changes nothing) on a foreign, corrupt or other-version state."""
    if not isinstance(state, dict) or state.get("version") != STATE_VERSION:
        raise ValueError("not a specgate learner state of this version")

    def table(name: str) -> dict[str, Ewma]:
        raw = state.get(name)
        if not isinstance(raw, dict):
            raise ValueError(f"missing {name}")
        return {str(k): _ewma_in(v, max_weight) for k, v in raw.items()}

    def pairs(name: str) -> dict[tuple[str, str], Ewma]:
        out = {}
        for key, e in table(name).items():
            task_class, sep, bucket = key.partition("/")
            if not sep:
                raise ValueError(f"bad key {key!r} in {name}")
            out[(task_class, bucket)] = e
        return out

    roles = {r: e for r, e in table("prefill").items() if r in ROLES}
    kappas = {r: e for r, e in table("interference").items() if r in ROLES}
    steps = state.get("step_models")
    if not isinstance(steps, dict) or set(roles) != set(ROLES) or set(kappas) != set(ROLES):
        raise ValueError("missing per-role estimates")
    thetas = {}
    for role in ROLES:
        raw = steps.get(role)
        if not isinstance(raw, list) or len(raw) != 3 or not all(isinstance(x, int | float) for x in raw):
            raise ValueError(f"bad step model for {role}")
        thetas[role] = [float(x) for x in raw]
    updates = (pairs("tokens_per_step"), table("bucket_tokens_per_step"), pairs("log_output"),
               pairs("output_fraction"), _ewma_in(state.get("backend_tokens_per_step"), max_weight))
    lrn._tokens_per_step, lrn._bucket_tokens_per_step, lrn._log_output, lrn._output_fraction = updates[:4]
    lrn._backend_tokens_per_step = updates[4]
    for role in ROLES:
        lrn._prefill[role], lrn._interference[role] = roles[role], kappas[role]
        base, slope, scale = thetas[role]
        fit = lrn._steps[role]
        fit.theta = [base * scale / fit.scale_s, slope * scale / fit.scale_s]  # the prior's spread: it still adapts
        lrn._kappa[role] = lrn._shrunk_interference(role)
        lrn._prefill_s[role] = lrn._shrunk_prefill(role)
    lrn._fitted = {role: fit.model() for role, fit in lrn._steps.items()}
    lrn._models = tied_models(lrn._steps, lrn.config.slope_tie, lrn.config.priors)
