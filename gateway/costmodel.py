"""Pure latency model of one request on each server of a pair that shares one GPU.

Each server's own engine step grows with its batch: `own(load) = base + per_request · load`. Without
MPS the two servers' kernels take turns, so a step of one server also waits for a share κ_self
(0 = perfect overlap, 1 = strict alternation; learned per server, since it is uneven: on the H200 the
baseline waited for about a fifth of a speculative step, the speculative server up to a whole
baseline step) of the other server's step whenever the other has work:

    step_s(self) = own_self(load_self) + κ_self · [load_other > 0] · own_other(load_other)

A request with P prompt tokens and O expected output tokens at T tokens per step (T = 1 on the
baseline, the learned mean acceptance length on the speculative server) is predicted at

    ttft = prefill_s_per_token · P + step_s
    e2e  = ttft + (O − 1) / T · step_s

and it slows the requests already running: each co-running request on its server loses `per_request`
per step of ours; each request on the other server waits κ_other · own_self per step of its own while ours
runs, and we are charged our share of that wait, own_self(load + 1) / (load + 1): all of it when ours
turns an idle server on, a per-capita share when others keep it busy too. (Charging only the step's growth
made an already busy server look free to keep busy: on the emulated replay of the H200 run the adaptive
policy kept a third of the traffic on the speculative server at c = 48 and ran 1.45-1.57x slower than all
on baseline.) That share is the one place where more load can make a server look cheaper; the predicted
latency itself is monotone in load.

That makes the per-request comparison sticky: once one server carries the traffic, sending a request to the
idle one looks expensive, whatever the request. The policy's optional home check is the other half: `predict`
with all the GPU's current work on one server and the other idle (no alternation) says which server is the
request's home.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLES = ("baseline", "speculative")
OTHER_ROLE = {"baseline": "speculative", "speculative": "baseline"}


@dataclass(frozen=True, slots=True)
class StepModel:
    """Seconds per engine step of one server on its own, as a function of its batch (coefficients ≥ 0)."""

    base_s: float
    per_request_s: float

    def own_s(self, load: float) -> float:
        return self.base_s + self.per_request_s * load


def step_s(model_self: StepModel, model_other: StepModel, load_self: float, load_other: float,
           interference: float) -> float:
    """One step of `self` with the other server's load on the same GPU."""
    waits = interference * model_other.own_s(load_other) if load_other > 0 else 0.0
    return model_self.own_s(load_self) + waits


@dataclass(frozen=True, slots=True)
class Load:
    """Requests in flight on a role's chosen backend (exact, counted at the gateway)."""

    inflight: int


@dataclass(frozen=True, slots=True)
class RequestShape:
    prompt_tokens: int
    output_tokens: float
    tokens_per_step: float  # 1.0 on the baseline


@dataclass(frozen=True, slots=True)
class Prediction:
    role: str
    ttft_s: float
    e2e_s: float
    externality_s: float
    step_s: float

    def cost(self, externality_weight: float) -> float:
        return self.e2e_s + externality_weight * self.externality_s


def predict(
    role: str,
    shape: RequestShape,
    load_self: Load,
    load_other: Load,
    model_self: StepModel,
    model_other: StepModel,
    interference_self: float,
    interference_other: float,
    prefill_s_per_token: float,
) -> Prediction:
    """Predicted TTFT, end-to-end latency and imposed slowdown of one request sent to `role`."""
    ls, lo = load_self.inflight, load_other.inflight
    step = step_s(model_self, model_other, ls + 1, lo, interference_self)
    steps = max(shape.output_tokens - 1.0, 0.0) / max(shape.tokens_per_step, 1.0)
    ttft = prefill_s_per_token * shape.prompt_tokens + step
    e2e = ttft + steps * step
    on_self = ls * model_self.per_request_s * (steps + 1.0)
    # Our share of what the other server's requests wait for: our step over the requests that keep our server
    # busy (all of it when ours turns an idle server on), or the step's growth if that is larger.
    growth = max(model_self.per_request_s, model_self.own_s(ls + 1) / (ls + 1))
    other_step = model_other.own_s(lo)  # its pace without waiting for us: an upper bound on its steps
    on_other = lo * interference_other * growth * (e2e / other_step) if lo > 0 else 0.0
    return Prediction(role=role, ttft_s=ttft, e2e_s=e2e, externality_s=on_self + on_other, step_s=step)

