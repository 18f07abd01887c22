"""Pure view of a shared GPU group's recent requests as its regime's mix sees them (`gateway.core.regime`).

The router keeps each routed request of a shared group (`GroupRequest`: its class, bucket, `max_tokens`, prompt, the
group's load at its decision) and, at each recomputation, turns the window into `MixSample`s with the learner's
current estimates (`mix_window`): what a class is expected to answer and copy is re-read each time, so the mix
follows the learner, not the estimates of the moment each request was routed."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from gateway.core.arrivals import arrival_rate
from gateway.core.classify import Features
from gateway.core.learner import Learner
from gateway.core.regime import MixSample
from gateway.core.switch_cache import NO_PREFIX, HeldPrefix

MixKey = tuple[str, str, int, bool]  # (class, temperature bucket, max_tokens, whether the client set it)
Known = dict[MixKey, tuple[float, float, float]]  # per key: the learner's output tokens, tokens per step mean, its sd


class GroupRequest(NamedTuple):
    """A recent request of a shared group, kept to recompute the group's mix with current estimates."""

    key: MixKey
    prompt_tokens: int
    single: bool  # n == 1: one completion (the mix leaves the others out)
    load: float
    prefix: HeldPrefix = NO_PREFIX  # what each server held of its prompt (a switch's cold cache, `core.switch_cache`)


def group_request(f: Features, task_class: str, bucket: str, load: float,
                  prefix: HeldPrefix = NO_PREFIX) -> GroupRequest:
    return GroupRequest((task_class, bucket, f.max_tokens, f.max_tokens_given), f.prompt_tokens, f.n == 1, load,
                        prefix)


def mix_window(recent: Iterable[GroupRequest], times: Sequence[float], now: float, learner: Learner,
               optimism: float, optimism_load: float) -> tuple[list[MixSample], list[MixKey], Known]:
    """The single-completion requests of `recent` as the mix sees them, each one's key, and per key the learner's
    (output tokens, tokens per step mean, its sd). Each sample's tokens per step as judged is the mean plus
    `optimism` sds, faded by the requests a wrong choice would commit past `optimism_load` (those running, or those
    arriving during one request at the rate of the decision `times`)."""
    # before a second request the arrival rate is unknown, and so is what a wrong choice would commit: no optimism
    rate = arrival_rate(times, now) if len(times) >= 2 else math.inf
    step = learner.step_model("baseline")
    base_s, per_request_s = step.base_s, step.per_request_s
    samples, keys = [], []
    known: Known = {}  # the window repeats a few (class, bucket, max_tokens) combinations: ask the learner once each
    for r in recent:
        if not r.single:
            continue
        key = r.key
        est = known.get(key)
        if est is None:
            est = known[key] = (learner.output_tokens(*key), *learner.tokens_per_step_posterior(key[0], key[1]))
        output, mean, sd = est
        load = r.load
        committed = max(load, rate * output * (base_s + per_request_s * max(load, 1.0)), 1.0)
        samples.append(MixSample(r.prompt_tokens, output, mean + optimism * sd * min(1.0, optimism_load / committed),
                                 load, mean))
        keys.append(key)
    return samples, keys, known
