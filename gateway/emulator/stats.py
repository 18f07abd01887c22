"""Plain counters of one emulated server, for tests and benchmarks (not exported over HTTP)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One finished choice; times in simulated seconds."""

    request_id: str
    index: int
    prompt_tokens: int
    completion_tokens: int
    steps: int  # engine steps that produced tokens = streamed chunks
    finish_reason: str
    ttft_s: float
    e2e_s: float


@dataclass(slots=True)
class ServerStats:
    requests: int = 0  # requests accepted by the engine
    completed: int = 0  # choices finished (stop or length)
    aborted: list[str] = field(default_factory=list)  # x-request-id of requests aborted on disconnect
    errors: int = 0  # requests answered with an error status
    steps: int = 0
    generation_tokens: int = 0
    drafts: int = 0
    draft_tokens: int = 0
    accepted_tokens: int = 0
    records: deque[RequestRecord] = field(default_factory=lambda: deque(maxlen=100_000))

    @property
    def mean_acceptance_length(self) -> float:
        return 1.0 + self.accepted_tokens / self.drafts if self.drafts else 1.0
