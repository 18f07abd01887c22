"""Fleet additions to the cost policy's choice: candidates that hold part of the prompt are scored however loaded,
and a client session's last backend wins a role's choice when it is within a small share of the cheapest.

Generic over the policy's `Candidate` (anything with `name` and `co_runners`), so `policy` imports this and not
the other way round."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar


class _Backend(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def co_runners(self) -> tuple[Any, ...]: ...


C = TypeVar("C", bound=_Backend)
S = TypeVar("S", bound=tuple[float, Any, Any])


def with_cached(candidates: Sequence[C], scoring: tuple[C, ...], cached: Mapping[str, int],
                affinity: str | None) -> tuple[C, ...]:
    """`scoring` plus each backend with a GPU of its own that holds part of the prompt, or is the session's last
    (the pruning to the least-loaded of a role assumes cost grows with load alone, which a cached prefix breaks)."""
    extra = [c for c in candidates
             if not c.co_runners and (c.name in cached or c.name == affinity) and c not in scoring]
    return scoring + tuple(extra) if extra else scoring


def cache_text(cached: int, prompt_tokens: int, session: bool) -> str:
    """What the reason header adds: the prompt tokens the chosen backend likely holds, and the session."""
    return (f", cached {cached}/{prompt_tokens} prompt tokens" if cached else "") + (", session" if session else "")


def best_with_affinity(scored: Sequence[S], affinity: str | None, tie: float) -> S | None:
    """The cheapest (cost, candidate, ...) entry; the `affinity` backend's instead when within `tie` of it."""
    if not scored:
        return None
    best = min(scored, key=lambda s: s[0])
    if affinity is not None and best[1].name != affinity:
        for s in scored:
            if s[1].name == affinity and s[0] <= best[0] * (1.0 + tie):
                return s
    return best
