"""One emulated vLLM engine: a scheduler loop with continuous batching and chunked prefill.

Each step (vLLM V1 scheduler order): running sequences first (a decode takes 1 + drafts tokens of the
`max_num_batched_tokens` budget, a partial prefill the rest of its prompt that fits), then waiting
requests are admitted FIFO while budget, `max_num_seqs` and KV blocks allow. The step's duration comes
from `costs.py`; its GPU work is reserved on the `SharedGPU` both servers use. All tokens a sequence gains
in a step are delivered together at the step's end (one streamed chunk per step).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from dataclasses import dataclass, field

from .clock import SharedGPU, SimClock
from .costs import Phase, SeqWork, baseline_phases, pad_to_gamma, speculative_phases
from .drafter import EOS, Speculation, StepOutcome
from .metrics import EngineMetrics
from .prefix_cache import BlockChain, PrefixCache, output_block_hashes
from .profiles import Profile
from .stats import RequestRecord, ServerStats


@dataclass(frozen=True, slots=True)
class StepEvent:
    """Tokens one choice gained in one engine step (finish_reason set on its last step)."""

    index: int
    tokens: list[str]
    finish_reason: str | None


@dataclass(eq=False, slots=True)
class Sequence:
    request_id: str
    index: int
    prompt_len: int
    target: list[str]
    finish_reason: str
    spec: Speculation | None
    queue: asyncio.Queue[StepEvent]
    arrival: float
    block_hashes: list[int] = field(default_factory=list)
    computed: int = 0  # prompt tokens whose KV is computed
    n_out: int = 0
    steps: int = 0
    first_token_at: float | None = None
    last_token_at: float = 0.0
    done: bool = False

    @property
    def prefilling(self) -> bool:
        return self.computed < self.prompt_len

    def blocks(self, block_size: int) -> int:
        return math.ceil((self.prompt_len + self.n_out + 1) / block_size)


@dataclass(slots=True)
class _Planned:
    seq: Sequence
    tokens: int
    outcome: StepOutcome | None  # None: a prefill chunk that does not finish the prompt


@dataclass(slots=True)
class _Batch:
    """One step being scheduled: what each sequence gets, and the work of each forward pass."""

    budget: int  # tokens left of `max_num_batched_tokens`
    plan: list[_Planned] = field(default_factory=list)
    verify: list[SeqWork] = field(default_factory=list)
    first_draft: list[SeqWork] = field(default_factory=list)
    later_draft: list[SeqWork] = field(default_factory=list)  # draft passes 2..γ: one token per decoding sequence
    prefill: bool = False


@dataclass(slots=True)
class RequestHandle:
    request_id: str
    seqs: list[Sequence] = field(default_factory=list)
    queue: asyncio.Queue[StepEvent] = field(default_factory=asyncio.Queue)


class Engine:
    def __init__(self, role: str, profile: Profile, clock: SimClock, gpu: SharedGPU, metrics: EngineMetrics,
                 stats: ServerStats, speculative: bool) -> None:
        self.role = role
        self.profile = profile
        self.clock = clock
        self.gpu = gpu
        self.metrics = metrics
        self.stats = stats
        self.speculative = speculative
        self.kv_blocks = profile.speculative_kv_blocks if speculative else profile.baseline_kv_blocks
        self.prefix_cache = PrefixCache(self.kv_blocks)
        self.waiting: deque[Sequence] = deque()
        self.running: list[Sequence] = []
        self._wake = asyncio.Event()
        self._last_end = 0.0
        self._task: asyncio.Task[None] | None = None

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=f"engine-{self.role}")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    # -- requests ----------------------------------------------------------------------------------
    def submit(self, handle: RequestHandle) -> None:
        now = self.clock.now()
        for seq in handle.seqs:
            seq.arrival = now
            self.waiting.append(seq)
        self.stats.requests += 1
        self._update_gauges()
        self._wake.set()

    def abort(self, handle: RequestHandle) -> None:
        """Free the request's batch slots at once (its client went away)."""
        removed = False
        for seq in handle.seqs:
            if seq.done:
                continue
            seq.done = True
            removed = True
            if seq in self.running:
                self.running.remove(seq)
            elif seq in self.waiting:
                self.waiting.remove(seq)
        if removed:
            self.stats.aborted.append(handle.request_id)
            self.metrics.success["abort"].inc()
            self._update_gauges()

    # -- the scheduler loop ----------------------------------------------------------------------
    async def _loop(self) -> None:
        busy = False
        while True:
            if not self.running and not self.waiting:
                self._wake.clear()
                await self._wake.wait()
                busy = False
            # While busy, steps follow each other on the simulated timeline: a step that starts late
            # because the event loop was busy is caught up by sleeping less, so jitter does not add up.
            start = self._last_end if busy else self.clock.now()
            plan, phases = self._schedule()
            if not plan:
                await asyncio.sleep(0)
                busy = False
                continue
            end = await self._execute(start + self._serial_overhead(plan), phases)
            self._last_end = end
            busy = True
            self._finish_step(plan, end)

    def _used_blocks(self) -> int:
        return sum(s.blocks(self.profile.block_size) for s in self.running)

    def _schedule(self) -> tuple[list[_Planned], list[Phase]]:
        batch = _Batch(self.profile.max_num_batched_tokens)
        gamma = self.profile.gamma_at(len(self.running))  # vLLM picks K from the batch it scheduled last
        for seq in self.running:
            if batch.budget <= 0:
                break
            if seq.prefilling:
                self._add_prefill(batch, seq)
            else:
                self._add_decode(batch, seq, gamma)
        self._admit_waiting(batch)
        return batch.plan, self._phases(batch)

    def _add_prefill(self, batch: _Batch, seq: Sequence) -> None:
        """The next chunk of the prompt that fits the budget."""
        chunk = min(seq.prompt_len - seq.computed, batch.budget)
        batch.plan.append(self._plan_prefill(seq, chunk))
        batch.verify.append(SeqWork(chunk, seq.computed + chunk))
        batch.first_draft.append(SeqWork(chunk, seq.computed + chunk))
        batch.budget -= chunk
        batch.prefill = True

    def _add_decode(self, batch: _Batch, seq: Sequence, gamma: int) -> None:
        """One sampled token plus the drafts that fit the budget, verified in the same pass."""
        remaining = len(seq.target) - seq.n_out
        drafts = seq.spec.propose(remaining, gamma) if seq.spec is not None else []
        drafts = drafts[: max(batch.budget - 1, 0)]
        outcome = (
            seq.spec.verify(drafts, seq.target, seq.n_out)
            if seq.spec is not None
            else StepOutcome([seq.target[seq.n_out]], 0, 0)
        )
        n = 1 + len(drafts)
        context = seq.prompt_len + seq.n_out + len(drafts)
        batch.plan.append(_Planned(seq, n, outcome))
        batch.verify.append(SeqWork(n, context))
        batch.first_draft.append(SeqWork(len(outcome.tokens), context))
        batch.later_draft.append(SeqWork(1, context + 1))
        batch.budget -= n

    def _admit_waiting(self, batch: _Batch) -> None:
        """Waiting requests join FIFO while the budget, `max_num_seqs` and the KV blocks allow."""
        p = self.profile
        used = self._used_blocks()
        while self.waiting and batch.budget > 0 and len(self.running) < p.max_num_seqs:
            seq = self.waiting[0]
            need = seq.blocks(p.block_size)
            if used + need > self.kv_blocks and self.running:
                break
            self.waiting.popleft()
            self.running.append(seq)
            used += need
            self.metrics.queue_time.observe(max(self.clock.now() - seq.arrival, 0.0))
            hits = self.prefix_cache.hit_blocks(seq.block_hashes) * p.block_size
            seq.computed = min(hits, seq.prompt_len - 1)  # the last prompt token is always computed
            self.metrics.prefix_queries.inc(seq.prompt_len)
            self.metrics.prefix_hits.inc(seq.computed)
            self._add_prefill(batch, seq)

    def _phases(self, batch: _Batch) -> list[Phase]:
        p = self.profile
        if not batch.plan:
            return []
        if not self.speculative:
            return baseline_phases(p, batch.verify)
        verify = batch.verify
        if p.spec_schedule is None and not batch.prefill:
            verify = pad_to_gamma(verify, p.gamma)
        passes = [batch.first_draft] + [batch.later_draft] * (p.gamma - 1)
        return speculative_phases(p, verify, passes)

    def _serial_overhead(self, plan: list[_Planned]) -> float:
        """Host time per step not overlapped with the GPU (see `Profile`)."""
        p = self.profile
        if not self.speculative:
            return p.step_overhead_s
        emitted = sum(len(item.outcome.tokens) for item in plan if item.outcome is not None)
        return p.spec_step_overhead_s + p.spec_token_host_s * emitted

    def _plan_prefill(self, seq: Sequence, chunk: int) -> _Planned:
        outcome = None
        if seq.computed + chunk >= seq.prompt_len:  # the prompt completes: the first token is sampled
            outcome = StepOutcome(seq.target[:1], 0, 0)
            if seq.spec is not None:
                seq.spec.observe(outcome.tokens)
        return _Planned(seq, chunk, outcome)

    async def _execute(self, start: float, phases: list[Phase]) -> float:
        """Run the step's phases: in each, host work and GPU work (time-shared) proceed together."""
        t = start
        for phase in phases:
            await self.clock.sleep_until(t)
            job = self.gpu.submit(self.role, t, phase.gpu_s)
            job_end = self.gpu.end_of(job)  # a simulation over the active jobs: once per wake-up
            while True:
                end = max(t + phase.host_s, job_end)
                await self.clock.sleep_until(end)
                self.gpu.advance(min(self.clock.now(), end))
                job_end = self.gpu.end_of(job)
                if job_end <= end:
                    break  # not pushed later by the other server's work meanwhile
            t = end
        return t

    def _finish_step(self, plan: list[_Planned], end: float) -> None:
        self.stats.steps += 1
        m = self.metrics
        for item in plan:
            seq = item.seq
            if seq.done:
                continue  # aborted during the step
            if seq.prefilling:
                m.prompt_tokens.inc(min(item.tokens, seq.prompt_len - seq.computed))
                seq.computed = min(seq.prompt_len, seq.computed + item.tokens)
                if not seq.prefilling:
                    self.prefix_cache.insert(seq.block_hashes)
            outcome = item.outcome
            if outcome is None:
                continue
            tokens = outcome.tokens
            seq.n_out += len(tokens)
            seq.steps += 1
            m.generation_tokens.inc(len(tokens))
            self.stats.generation_tokens += len(tokens)
            if outcome.drafted:
                m.record_spec(outcome.drafted, outcome.accepted)
                self.stats.drafts += 1
                self.stats.draft_tokens += outcome.drafted
                self.stats.accepted_tokens += outcome.accepted
            if seq.first_token_at is None:
                seq.first_token_at = end
                m.ttft.observe(end - seq.arrival)
            else:
                m.itl.observe(end - seq.last_token_at)
            seq.last_token_at = end
            finished = seq.n_out >= len(seq.target)
            reason = seq.finish_reason if finished else None
            seq.queue.put_nowait(StepEvent(seq.index, tokens, reason))
            if finished:
                self._complete(seq, end)
        self._update_gauges()

    def _complete(self, seq: Sequence, end: float) -> None:
        seq.done = True
        if seq in self.running:
            self.running.remove(seq)
        if isinstance(seq.block_hashes, BlockChain):  # the reply's full blocks, for the conversation's next turn
            reply = [t for t in seq.target[: seq.n_out] if t != EOS]
            # freed as vLLM frees them: the whole chain, tail first (the prompt's head is the last evicted)
            self.prefix_cache.insert([*seq.block_hashes, *output_block_hashes(seq.block_hashes, reply,
                                                                             self.profile.block_size)])
        self.metrics.success[seq.finish_reason].inc()
        self.metrics.e2e.observe(end - seq.arrival)
        self.stats.completed += 1
        self.stats.records.append(
            RequestRecord(
                request_id=seq.request_id,
                index=seq.index,
                prompt_tokens=seq.prompt_len,
                completion_tokens=seq.n_out,
                steps=seq.steps,
                finish_reason=seq.finish_reason,
                ttft_s=(seq.first_token_at or end) - seq.arrival,
                e2e_s=end - seq.arrival,
            )
        )

    def _update_gauges(self) -> None:
        self.metrics.running.set(len(self.running))
        self.metrics.waiting.set(len(self.waiting))
        self.metrics.kv_usage.set(min(1.0, self._used_blocks() / self.kv_blocks))
