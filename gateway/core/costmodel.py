"""Pure latency model of one request on one server, with the servers that share its GPU.

Each server's own engine step grows with its batch: `own(load) = base + per_request · load`. Servers in
the same GPU group (a baseline + speculative pair on one GPU) take turns on the GPU without MPS, so a step
of one also waits for a share κ_self (0 = perfect overlap, 1 = strict alternation; learned per role, since
it is uneven: on the H200 the baseline waited for about a fifth of a speculative step, the speculative
server up to a whole baseline step) of each co-runner's step while that co-runner has work:

    step_s(self) = own_self(load_self) + κ_self · Σ_co-runners with work own_co(load_co)

A server with a GPU of its own has no co-runners. A request with P prompt tokens and O expected output
tokens at T tokens per step (T = 1 on the baseline, the learned mean acceptance length on the speculative
server) is predicted at

    ttft = prefill_s_per_token · P + step_s
    e2e  = ttft + (O − 1) / T · step_s

and it slows the requests already running: each co-running request on its server loses `per_request` per
step of ours; each request of a co-runner waits κ_co · own_self per step of its own while ours runs, and we
are charged our share of that wait, own_self(load + 1) / (load + 1): all of it when ours turns an idle
server on, a per-capita share when others keep it busy too. That share is the one place where more load can
make a server look cheaper; the predicted latency itself is monotone in load.

A fleet server (a GPU of its own) adds two terms for the work a request's prompt queues behind and imposes
(the batch cost of piling onto fewer servers, which the per-request step growth alone hardly sees: a decode
step grows by ~0.07 ms a request, a 1.4k-token prefill takes ~35 ms and stalls the whole batch):

    ttft        += prefill_s_per_token · Q      (Q: prompt tokens queued on it, not yet prefilled)
    externality += load · prefill_s_per_token · P   (each request already there waits for our prefill)

and the prompts that will arrive while it decodes are prefilled inside its steps (chunked prefill): its decode is
divided by (1 − ρ), ρ the share of a decode that arrivals' prefill took there (`core.decode_stall`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from gateway.core.domain import ROLES as ROLES  # the role names live in gateway.core.domain; re-exported for the core
from gateway.core.domain import Role as Role

OTHER_ROLE: dict[Role, Role] = {"baseline": "speculative", "speculative": "baseline"}


class StepModel(NamedTuple):
    """Seconds per engine step of one server on its own, as a function of its batch (coefficients ≥ 0)."""

    base_s: float
    per_request_s: float

    def own_s(self, load: float) -> float:
        return self.base_s + self.per_request_s * load


class Stall(NamedTuple):
    """A saturated shared GPU: each step, whichever server runs it, also carries `per_request_s` seconds of other
    requests' prefill per request on the GPU beyond `from_load` (the queue's prompts, chunked into every step;
    learned by `core.decode_stall.SharedStall`). None below `from_load`, where the step models hold."""

    per_request_s: float = 0.0
    from_load: float = math.inf

    def step_s(self, load: float) -> float:
        return self.per_request_s * (load - self.from_load) if load > self.from_load else 0.0


NO_STALL = Stall()


class CoRunner(NamedTuple):
    """Another server on the same GPU: its step model, its load and its κ (the share of our step it waits)."""

    model: StepModel
    load: float
    interference: float


def step_s(model_self: StepModel, load_self: float, co_runners: Sequence[CoRunner], interference: float) -> float:
    """One step of `self` with its co-runners' loads on the same GPU."""
    waits = sum(c.model.own_s(c.load) for c in co_runners if c.load > 0)
    return model_self.own_s(load_self) + interference * waits


class RequestShape(NamedTuple):
    prompt_tokens: int
    output_tokens: float
    tokens_per_step: float  # 1.0 on the baseline


class Prediction(NamedTuple):
    ttft_s: float
    e2e_s: float
    externality_s: float
    step_s: float

    def cost(self, externality_weight: float) -> float:
        return self.e2e_s + externality_weight * self.externality_s


def predict(
    shape: RequestShape,
    load_self: float,
    model_self: StepModel,
    interference_self: float,
    prefill_s_per_token: float,
    co_runners: Sequence[CoRunner] = (),
    queued_prefill_tokens: float = 0.0,
    stall: bool = False,
    decode_stall: float = 0.0,
    stall_step_s: float = 0.0,
) -> Prediction:
    """Predicted TTFT, end-to-end latency and imposed slowdown of one request sent to a server with
    `load_self` requests already running or waiting, `queued_prefill_tokens` of their prompts not yet prefilled
    (ours waits for them), and, with `stall`, our prefill stalling the decode of every request already there;
    `decode_stall`: the share of its decode that prompts arriving during it will take (`core.decode_stall`);
    `stall_step_s`: a saturated shared GPU's prefill in each of its steps (`Stall`)."""
    ls = load_self
    step = step_s(model_self, ls + 1, co_runners, interference_self) + stall_step_s
    steps = max(shape.output_tokens - 1.0, 0.0) / max(shape.tokens_per_step, 1.0)
    prefill = prefill_s_per_token * shape.prompt_tokens
    ttft = prefill_s_per_token * max(queued_prefill_tokens, 0.0) + prefill + step
    e2e = ttft + steps * step / (1.0 - min(max(decode_stall, 0.0), 0.9))
    externality = ls * model_self.per_request_s * (steps + 1.0)
    if stall:  # a prefill chunk fills the step: the requests already there wait for it (at most all of them)
        externality += ls * prefill
    # Our share of what the co-runners' requests wait for: our step over the requests that keep our server
    # busy (all of it when ours turns an idle server on), or the step's growth if that is larger.
    growth = max(model_self.per_request_s, model_self.own_s(ls + 1) / (ls + 1))
    for c in co_runners:
        if c.load > 0:  # its pace without waiting for us is an upper bound on its steps during ours
            externality += c.load * c.interference * growth * (e2e / c.model.own_s(c.load))
    return Prediction(ttft_s=ttft, e2e_s=e2e, externality_s=externality, step_s=step)
