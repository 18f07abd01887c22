"""The quick analytic pass: each layout's mean latency predicted from the cost model's step priors.

Per request: its prompt and output length and its tokens per speculative step (the emulator's drafter over
the workload's references, as `clairvoyant` uses, or a class's measured acceptance with `--from`). Per role:
the load by Little's law, every request routed to the role that serves it sooner, iterated to a fixed point.
A pair GPU counts as one server of whichever role is cheaper for the whole mix (its regime). A dynamic-K
server speculates γ = 4 drafts up to 4 running requests, 2 up to 16 and none above (vLLM's
`num_speculative_tokens_per_batch_size`, the schedule of `h200-ngram-dynk`).
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from gateway.bench.plan.layouts import Layout
from gateway.core.costmodel import RequestShape, StepModel, predict
from gateway.emulator.profiles import DYNK_SCHEDULE
from gateway.settings import Settings
from gateway.workloads.items import WorkloadItem


@dataclass(frozen=True, slots=True)
class Shape:
    prompt_tokens: int
    output_tokens: float
    tokens_per_step: float


def shape_map(items: Sequence[WorkloadItem], profile: str) -> dict[str, Shape]:
    """Each request's shape by id (requests without a reference the drafter can read are left out)."""
    from gateway.bench.replay.oracle import oracle_entries

    oracle = oracle_entries(items, profile)
    out = {}
    for item in items:
        o = oracle.get(item.id)
        chars = len(json.dumps(item.body.get("messages") or item.body.get("prompt") or ""))
        if o is not None:
            out[item.id] = Shape(chars // 4, float(o["output_tokens"]), float(o["tokens_per_step"]))
    return out


def shapes(items: Sequence[WorkloadItem], profile: str) -> list[Shape]:
    return list(shape_map(items, profile).values())


def dynk_tokens_per_step(tokens_per_step: float, load: float) -> float:
    """Tokens per step of a dynamic-K server at `load` running requests: γ follows the batch-size schedule;
    with fewer drafts a step keeps at most γ + 1 tokens of what γ = 4 would have accepted."""
    gamma = 0
    for first, last, g in DYNK_SCHEDULE:
        if first <= max(1.0, load + 1.0) <= last:
            gamma = g
    return min(tokens_per_step, 1.0 + gamma)


class _Model:
    def __init__(self) -> None:
        s = Settings()
        self.prefill = s.prior_prefill_s_per_token
        self.steps = {"baseline": StepModel(s.prior_step_s, s.prior_step_per_request_s),
                      "speculative": StepModel(s.prior_speculative_step_s, s.prior_speculative_step_per_request_s)}

    def e2e(self, role: str, w: Shape, load: float) -> float:
        if role == "dynk":
            tps = dynk_tokens_per_step(w.tokens_per_step, load)
            step = self.steps["speculative" if tps > 1.0 else "baseline"]
        else:
            tps = w.tokens_per_step if role == "speculative" else 1.0
            step = self.steps[role]
        return predict(RequestShape(w.prompt_tokens, w.output_tokens, tps), load, step, 0.0, self.prefill).e2e_s


def _fixed_point(model: _Model, servers: dict[str, int], work: Sequence[Shape], rate_per_s: float) -> float:
    loads = dict.fromkeys(servers, 0.0)
    mean = float("inf")
    for _ in range(40):
        chosen: dict[str, list[float]] = {role: [] for role in servers}
        for w in work:
            e2e, role = min((model.e2e(role, w, loads[role]), role) for role, n in servers.items() if n)
            chosen[role].append(e2e)
        total = sum(len(v) for v in chosen.values())
        for role, count in servers.items():
            if count and chosen[role]:
                busy = rate_per_s * (len(chosen[role]) / total) * statistics.mean(chosen[role]) / count
                loads[role] = 0.5 * loads[role] + 0.5 * busy
        mean = statistics.mean(x for v in chosen.values() for x in v)
    return mean


def analytic_mean_s(layout: Layout, work: Sequence[Shape], rate_per_s: float) -> float:
    """Predicted mean e2e (s) of `work` arriving at `rate_per_s` on `layout`."""
    model = _Model()
    roles = layout.roles
    npair = roles.pop("pair")
    best = float("inf")
    for pair_role in (("baseline", "speculative") if npair else ("baseline",)):
        servers = dict(roles)
        servers[pair_role] += npair
        best = min(best, _fixed_point(model, servers, work, rate_per_s))
    return best
