"""Whether a shared GPU is saturated by prompts: then each step of either server carries the others' prefill, the two
servers' steps are alike, and the load cap on speculation (`gateway.core.regime`) does not hold."""

from __future__ import annotations

import math
from collections.abc import Mapping

from gateway.core.costmodel import Role, Stall, StepModel
from gateway.core.regime import RegimeConfig


def prefill_bound(stall: Stall, models: Mapping[Role, StepModel], load: float, prompts_s: float = 0.0,
                  span_s: float = math.inf) -> bool:
    """Whether a shared GPU at `load` is saturated by prompts: the others' prefill each step carries (`Stall`) is at
    least the speculative server's own step there, or, before that is learned (a flood's first answers come back
    seconds late), the prompts that arrived over the last `span_s` take at least that long to prefill (`prompts_s`).
    Then the load cap does not hold: what the step models may get wrong above it is the smaller part of a step, and
    the part they leave out, the same on either server, makes a request cost its steps (the Azure code windows: the
    n-gram server alone 6% faster, the baseline held by the cap; c2 of the burst entered speculation before its flood,
    and the cap took it out at the flood's onset, unpriced, before any answer taught the stall: 1.19x)."""
    return (stall.per_request_s > 0 and stall.step_s(load) >= models["speculative"].own_s(load)) or prompts_s >= span_s


def still_saturated(was: bool, stall: Stall, models: Mapping[Role, StepModel], mean_load: float, prompts_s: float,
                    span_s: float, cfg: RegimeConfig) -> bool:
    """A GPU above the load cap is saturated by prompts once `prefill_bound`, and stays so until its load falls back to
    the cap (`was`: it was at the last reading): the queue of prompts drains only then.
    c3 of the code burst carried its flood on the n-gram server, and 14 s in, with 270 requests queued there, the
    arrivals had slowed below the GPU's prefill rate and the stall read off the step models (bent by the prompts of
    the light phase) was small: the cap took the regime out, unpriced, and the two servers co-ran for 20 s (1.36x)."""
    return mean_load > cfg.speculation_max_load and (was or prefill_bound(stall, models, mean_load, prompts_s, span_s))
