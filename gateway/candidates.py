"""The policy's view of the backends on each decision: `Candidate`s with their loads, and the ones worth a
prediction. It runs for every backend on every decision (16 in a fleet), so it keeps what has not changed:

- each backend's `Candidate` is reused unless its load or a co-runner's moved since the last decision (a decision
  moves one backend's load; at c = 1 none has moved by the next), and the last tuple itself is returned when
  nothing changed;
- a server with a GPU of its own and prompts in flight is rebuilt on every decision: the ages of its prompts
  (`Candidate.queued`, its prefill queue) move with time; requests others sent that its scrape says are waiting
  join that queue (`others_waiting`);
- `scoring_candidates` is memoised on the identity of its inputs: the same candidates tuple and the same regime
  views (rebuilt only when a regime changes) give the same answer.

An idle fleet of 16 backends in 8 pairs cost 33–43 µs more a route than 2 backends; with both, 16–19 µs
(`specgate bench-decision --backends 16 --layout pairs --idle --against 2`).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping

from gateway.backends import Backend, BackendPool
from gateway.core.costmodel import Role
from gateway.core.policy import Candidate, scoring_candidates


def others_waiting(pool: BackendPool, b: Backend, load: float, now: float) -> tuple[float, int] | None:
    """The requests waiting on a fleet server that this process did not send (other gateways' or clients'), as
    one entry of its prefill queue: (seconds since the scrape that saw them, prompt tokens at this process's mean
    prompt there, else the fleet's). `vllm:num_requests_waiting` says how many wait, not their prompts; those
    beyond this process's own in flight (which its queue holds already) are others', and at most the load beyond
    its own. None if none."""
    snap = b.snapshot
    n = 0.0 if snap is None else min(snap.waiting - b.inflight, load - b.inflight)
    if n < 1:
        return None
    tokens, prompts = b.prompt_tokens_sent, b.prompts_sent
    if not prompts:
        tokens, prompts = sum(o.prompt_tokens_sent for o in pool.backends), sum(o.prompts_sent for o in pool.backends)
    return (max(now - b.scraped_at, 0.0), round(n * tokens / prompts)) if prompts else None


class CandidateView:
    def __init__(self, pool: BackendPool, light_load: float) -> None:
        self.pool = pool
        self.light_load = light_load  # `AdaptiveConfig.exception_load`, what `scoring_candidates` is asked with
        self._candidates: dict[str, Candidate] = {}  # per backend, the last decision's (reused when unchanged)
        self._loads: dict[str, float] = {}  # each backend's load at the last decision
        self._last: tuple[Candidate, ...] = ()
        # the candidates worth a prediction, for the last (candidates, regimes) they were computed for
        self._scoring: tuple[tuple[Candidate, ...], Mapping[str, Role], tuple[Candidate, ...]] | None = None

    def candidates(self, now: float, exclude: frozenset[Backend]) -> tuple[Candidate, ...]:
        """The routable backends not in `exclude`, with their loads (each computed once, co-runners included)."""
        pool = self.pool
        load = pool.load
        loads = {b.name: load(b, now) for b in pool.backends}
        before, self._loads = self._loads, loads
        changed = [name for name, value in loads.items() if before.get(name) != value]
        members = pool.co_members
        last = self._candidates
        out = []
        for b in pool.backends:
            name = b.name
            if not (b.healthy and now >= b.ejected_until) or b in exclude:  # `Backend.routable`, inlined
                last.pop(name, None)  # its loads may move while it is out: rebuilt when it is back
                continue
            c = last.get(name)
            others = None if members[name] else others_waiting(pool, b, loads[name], now)
            if (b.sent or others) and not members[name]:  # a fleet server with prompts in flight: their ages move
                queued = [(now - t, tokens) for t, tokens in b.sent]
                if others:
                    queued.insert(sum(1 for age, _ in queued if age >= others[0]), others)
                c = last[name] = Candidate(name, b.role, b.group, loads[name], (), tuple(queued))
            elif c is None or c.queued or (changed and (name in changed
                                                        or any(o.name in changed for o in members[name]))):
                co = tuple([(o.role, loads[o.name]) for o in members[name]]) if members[name] else ()
                c = last[name] = Candidate(name, b.role, b.group, loads[name], co)
            out.append(c)
        previous = self._last
        if len(out) == len(previous) and all(map(operator.is_, out, previous)):
            return previous
        self._last = result = tuple(out)
        return result

    def scoring(self, candidates: tuple[Candidate, ...], regimes: Mapping[str, Role]) -> tuple[Candidate, ...]:
        """`scoring_candidates(candidates, regimes, light_load)`, the last answer when given the same objects."""
        memo = self._scoring
        if memo is not None and memo[0] is candidates and memo[1] is regimes:
            return memo[2]
        scoring = scoring_candidates(candidates, regimes, self.light_load)
        self._scoring = (candidates, regimes, scoring)
        return scoring
