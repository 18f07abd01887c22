"""One finished request as the gateway saw it: what the learner (`gateway.core.learner`) learns from."""

from __future__ import annotations

from gateway.core.domain import Role
from gateway.core.records import record


@record
class Observation:
    """One finished request, as the gateway saw it."""

    role: Role
    task_class: str
    bucket: str
    prompt_tokens: int
    completion_tokens: int
    steps: int | None  # content chunks of a streamed response; None when not streamed
    ttft_s: float
    e2e_s: float
    load_self: float  # running + waiting on its server when it started, itself included
    co_runners: tuple[tuple[Role, float], ...] = ()  # the other servers on its GPU: (role, load)
    max_tokens: int | None = None  # as the client set it
    warmup: bool = False  # among its backend's first requests: timing not representative
    # uncached prompt tokens sent to its server after it (to a co-runner: after its first chunk), before its end
    prefill_during_decode: int = 0
    prefills_during_decode: int = 0  # the prompts those tokens came in (0: not known)
    structured: bool = False  # `core.per_request`: structured output asked for
    cached_tokens: int = 0  # prefix caching: prompt tokens likely cached (not prefilled)
    family: int | None = None  # its prompt's family (`core.acceptance_cells.family_of`)
    temperature: float = 0.0
    queued_prefill_tokens: float = 0.0  # others' prompt tokens priced as queued ahead of it (`Decision.queued_tokens`)
    copy_kind: str = "new"  # what its answer may copy (`classify.Features.copy_kind`): keys acceptance cells
    predicted_tokens_per_step: float | None = None  # the raw per-request estimate it was routed on (`calibration`)
    read_early: tuple[int, int] | None = None  # tokens and engine steps already read for acceptance while it ran
