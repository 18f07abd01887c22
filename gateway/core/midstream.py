"""Pure rule of a mid-stream move on a fleet: a request running on a speculative server whose drafts are rejected
*for this request* moves to a baseline server (its upstream aborted, resumed there from the text so far by
`gateway/migrate.py`) once staying is predicted dearer than moving.

Why: on the Azure windows the routing gap between adaptive and the clairvoyant is each request's own tokens per step
(results/fleet-accept-2026-12-05-h), which nothing in the request says, but its stream shows: vLLM sends one chunk per
engine step, so the completion tokens a chunk adds are the tokens that step made (1 + accepted drafts). Every
`every` decode steps the request is priced again from its last `window` steps: one look at the start misses an edit
that copies its first lines at 3 tokens a step and writes the rest at 1.2 (results/fleet-midstream-2026-12-06-i).

Remaining length: as many tokens again as it has made, capped by its token budget. A running request's length is
what the learner predicts worst (its median error was 0.29 on these windows); what it has made is a length-free
guess that grows with the evidence that it is long, and the move only pays for long requests.

Moving costs the request its prompt (less what the destination caches) and its text so far, prefilled again there,
and costs the destination's co-runners that prefill (a prefill chunk rides in their step) and a little per step
afterwards; leaving relieves the source's co-runners of a request (the step models' `per_request_s`).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class MidstreamConfig:
    every: int = 8  # decode steps between two looks at a running request
    window: int = 8  # the decode steps a look reads (the last ones)
    margin: float = 0.0  # moving must be predicted this share cheaper than staying


@dataclass(frozen=True, slots=True)
class Running:
    """A request where it runs (a speculative server), as its stream and the step model show it."""

    tokens: int  # completion tokens so far
    window_tokens: int  # of them, made in the last `window_steps` decode steps
    window_steps: int
    budget_left: int | None  # max_tokens less `tokens` (None: no budget given)
    step_s: float  # a step of its server at that server's load
    others: float  # the other requests running there
    per_request_s: float  # what one running request adds to a step there


@dataclass(frozen=True, slots=True)
class Destination:
    """The server it would move to (a baseline server), with the request joined."""

    step_s: float
    others: float
    per_request_s: float
    prefill_s: float  # its uncached prompt + text so far, prefilled there


@dataclass(frozen=True, slots=True)
class MidstreamCall:
    move: bool
    tokens_per_step: float  # read from the window
    remaining_tokens: float
    stay_s: float
    move_s: float  # the request's own time moved plus what the move costs and spares the co-runners

    def reason(self) -> str:
        verdict = "move" if self.move else "stay"
        return (f"{verdict}: {self.tokens_per_step:.2f} tokens/step, ~{self.remaining_tokens:.0f} left, "
                f"stay {self.stay_s * 1e3:.0f} ms, move {self.move_s * 1e3:.0f} ms")


@dataclass(slots=True)
class StepWindow:
    """A stream's completion tokens after each of its engine steps, the last `size` + 1 of them: a step is an event
    whose usage shows more tokens than the one before (vLLM streams one chunk per step; the first is the prefill's
    token, not a decode step)."""

    size: int
    marks: deque[int] = field(default_factory=deque)
    steps: int = -1  # decode steps so far
    last_look: int = 0

    def feed(self, tokens: int) -> bool:
        """The stream's completion tokens after an event; whether that event was a new step."""
        if tokens <= 0 or (self.marks and tokens <= self.marks[-1]):
            return False
        self.marks.append(tokens)
        self.steps += 1
        if len(self.marks) > self.size + 1:
            self.marks.popleft()
        return True

    def recent(self) -> tuple[int, int]:
        """Tokens made in the last decode steps, and how many steps that was."""
        if len(self.marks) < 2:
            return 0, 0
        return self.marks[-1] - self.marks[0], len(self.marks) - 1


def due(decode_steps: int, last_look: int, config: MidstreamConfig) -> bool:
    """Whether a request with `decode_steps` decode steps, last looked at after `last_look`, is looked at now."""
    return decode_steps >= config.window and decode_steps - last_look >= config.every


def remaining_tokens(tokens: int, budget_left: int | None) -> float:
    left = float(max(tokens, 1))
    return left if budget_left is None else min(left, float(max(budget_left, 0)))


def judge(run: Running, dest: Destination, config: MidstreamConfig) -> MidstreamCall:
    """Stay or move, priced on the request's own recent tokens per step."""
    tps = max(run.window_tokens / run.window_steps, 1.0) if run.window_steps > 0 else 1.0
    left = remaining_tokens(run.tokens, run.budget_left)
    stay_steps = left / tps
    stay = stay_steps * run.step_s
    move = (dest.prefill_s + left * dest.step_s
            + dest.others * (dest.prefill_s + left * dest.per_request_s)
            - run.others * stay_steps * run.per_request_s)
    resumable = run.budget_left is None or run.budget_left >= 2  # a resume needs a token of budget left
    return MidstreamCall(resumable and move * (1.0 + config.margin) < stay, tps, left, stay, move)
