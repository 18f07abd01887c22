"""Pure latency model of one request on each backend of a pair that shares one GPU.

Per engine step of a server, step time grows with its own batch and with the other server's load
(without MPS the two servers' kernels take turns):

    step_s(role) = base + per_request * load_self + other_busy * [load_other > 0] + per_other_request * load_other

A request with P prompt tokens and O output tokens at T tokens per step (T = 1 on the baseline,
the learned mean acceptance length on the speculative server) is predicted to take

    ttft = prefill_s_per_token * P + step_s
    e2e  = ttft + (O - 1) / T * step_s

and to slow the requests already running: each co-running request on the same server loses
`per_request` per step for the request's steps, and each request on the other server loses
`per_other_request` per step of its own while ours runs, plus `other_busy` when ours turns an idle
server on. That turn-on charge is the one place where more load can make a server look cheaper (an
already busy server costs the other nothing extra to keep busy); the predicted latency itself is
monotone in load. The policy adds that externality, weighted.
"""

from __future__ import annotations

from dataclasses import dataclass

ROLES = ("baseline", "speculative")


@dataclass(frozen=True, slots=True)
class StepModel:
    """Seconds per engine step of one server as a function of load (all coefficients ≥ 0)."""

    base_s: float
    per_request_s: float
    other_busy_s: float
    per_other_request_s: float

    def step_s(self, load_self: float, load_other: float) -> float:
        busy_other = 1.0 if load_other > 0 else 0.0
        return (
            self.base_s
            + self.per_request_s * load_self
            + self.other_busy_s * busy_other
            + self.per_other_request_s * load_other
        )


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
    prefill_s_per_token: float,
) -> Prediction:
    """Predicted TTFT, end-to-end latency and imposed slowdown of one request sent to `role`."""
    batch = load_self.inflight + 1
    step = model_self.step_s(batch, load_other.inflight)
    tokens_per_step = max(shape.tokens_per_step, 1.0)
    steps = max(shape.output_tokens - 1.0, 0.0) / tokens_per_step
    ttft = prefill_s_per_token * shape.prompt_tokens + step
    e2e = ttft + steps * step
    # Slowdown imposed on others while this request runs (steps + one prefill step).
    on_self = load_self.inflight * model_self.per_request_s * (steps + 1.0)
    other_step = model_other.step_s(load_other.inflight, 0)  # its pace without us: an upper bound on its steps
    other_steps_during = e2e / other_step if other_step > 0 else 0.0
    # Turning an idle server on makes every step of the other wait for ours: charge it only then.
    turn_on = model_other.other_busy_s if load_self.inflight == 0 else 0.0
    on_other = load_other.inflight * (model_other.per_other_request_s + turn_on) * other_steps_during
    return Prediction(role=role, ttft_s=ttft, e2e_s=e2e, externality_s=on_self + on_other, step_s=step)
