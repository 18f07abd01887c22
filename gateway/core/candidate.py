"""The policy's view of one routable backend (`Candidate`), and which candidates are worth a prediction.

A fleet server (a GPU of its own) also carries the prompts this gateway has in flight on it, with their ages; the
cost model drains them at the learned prefill rate (`queued_prefill_tokens`): what is left is the prefill a new
request queues behind before its first token (on Mooncake-like 12-14k-token prompts, most of the TTFT).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter
from typing import NamedTuple

from gateway.core.costmodel import Role


class Candidate(NamedTuple):
    """A routable backend as the policy sees it (a tuple: one per backend on every decision)."""

    name: str
    role: Role
    group: str
    load: float  # requests running + waiting on it
    co_runners: tuple[tuple[Role, float], ...] = ()  # the other servers on its GPU: (role, load)
    # a server with a GPU of its own: (seconds since sent, prompt tokens) of the requests this gateway has in flight
    # on it, oldest first; `queued_prefill_tokens` drains it into the prompt tokens it has likely not prefilled yet
    queued: tuple[tuple[float, int], ...] = ()

    @property
    def shared(self) -> bool:
        return bool(self.co_runners)


def gpu_load(c: Candidate) -> float:
    return c.load + sum(load for _, load in c.co_runners)


def scoring_candidates(candidates: tuple[Candidate, ...], regimes: Mapping[str, Role],
                       light_load: float) -> tuple[Candidate, ...]:
    """The candidates the cost policy predicts for: those its GPU's regime allows (`_eligible`), pruned to those
    that can be cheapest (`_worth_scoring`). A function of its arguments only, so a caller that sees the same
    candidates and regimes again may pass the last result as `PolicyInput.scoring` (an idle fleet, decision after
    decision)."""
    return tuple(_worth_scoring(_eligible(candidates, regimes, light_load)))


def _eligible(candidates: tuple[Candidate, ...], regimes: Mapping[str, Role], light_load: float) -> list[Candidate]:
    """Candidates allowed by their GPU group's regime (a shared group is carried by one role at a time), and the
    idle server of a GPU running at most `light_load` requests: there a request's cheaper server slows few others
    (the cost of carrying a batch is what makes the idle server of a busy GPU look expensive). Only an idle one:
    a request joining the other server's few requests would look cheap for the same sticky reason, and the
    exceptions would snowball into a second regime. `decide_cost` asks an exception to win by `exception_margin`
    (on a GPU with nothing running, by the ordinary margin)."""
    # _outside_regime, written out: it runs for every candidate of every decision
    allowed = [c for c in candidates
               if not (c.co_runners and regimes.get(c.group, "baseline") != c.role)
               or (c.load == 0 and gpu_load(c) <= light_load)]
    return allowed or list(candidates)


def _worth_scoring(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates that can be cheapest: the predicted cost grows with a candidate's own load and with its
    co-runners' loads, so of each role only the least-loaded candidate with a GPU of its own and nothing queued (one
    with queued prompts is always scored: its prefill queue is priced too) needs a prediction. A shared candidate's
    cost is not monotone in its own load (its share of the co-runners' wait, `costmodel`, falls as its batch
    grows), so every shared candidate with loads of its own is scored; equal loads predict equal costs."""
    if len({c.role for c in candidates}) == len(candidates):  # one per role (a pair): nothing to prune
        return list(candidates)
    # plain loops, not comprehensions: this runs on every decision over every backend of a fleet
    shared: dict[Role, list[tuple[float, float, int, Candidate]]] = {"baseline": [], "speculative": []}
    seen: set[tuple[Role, float, float]] = set()
    own: dict[Role, Candidate] = {}
    queued: list[Candidate] = []
    i = 0
    for c in candidates:
        if not c.co_runners:
            if c.queued:  # its queued prefill can make a busier server cheaper (or a quieter one dearer)
                queued.append(c)
            elif c.role not in own or c.load < own[c.role].load:
                own[c.role] = c
            continue
        co = 0.0
        for _, load in c.co_runners:
            co += load
        key = (c.role, c.load, co)
        if key not in seen:  # equal loads predict equal costs: one of them is enough
            seen.add(key)
            shared[c.role].append((c.load, co, i, c))
            i += 1
    # no Pareto pruning of shared candidates by (load, co-load): a Hypothesis example (two baselines of one GPU,
    # loads 1 and 2) had the busier one cheaper, and the pruned decision took the dearer
    front = sorted(((i, c) for entries in shared.values() for _, _, i, c in entries), key=itemgetter(0))
    return [c for _, c in front] + list(own.values()) + queued


def queued_prefill_tokens(queued: Sequence[tuple[float, int]], s_per_token: float) -> float:
    """Prompt tokens still to prefill on a server that prefills one prompt after another at `s_per_token`, given
    (seconds since sent, prompt tokens) of the prompts in flight on it, oldest first: a fluid FIFO queue, each
    prompt joining when sent and the server draining 1 / s_per_token tokens a second while any is left. Monotone:
    more or younger prompts never leave fewer tokens."""
    if not queued or s_per_token <= 0:
        return 0.0
    backlog, t = 0.0, -queued[0][0]
    for age, tokens in queued:
        sent = -age
        if sent > t:
            backlog = max(backlog - (sent - t) / s_per_token, 0.0)
            t = sent
        backlog += tokens
    return max(backlog + t / s_per_token, 0.0)  # drained from the last send (t ≤ 0) until now
