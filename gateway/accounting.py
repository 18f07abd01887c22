"""After a response: the request's metrics, what the learner observes, and the access log line.

`Proxy` schedules `Accounting.record` with `call_soon` once an attempt ends, so none of this adds to the
client's latency.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from gateway.accesslog import AccessLog
from gateway.backends import Backend, BackendPool
from gateway.core.costmodel import Role
from gateway.core.learner import Learner, Observation
from gateway.core.protocol import CHAT
from gateway.core.records import record
from gateway.metrics import Metrics
from gateway.relay import Outcome
from gateway.settings import Settings
from gateway.shadow import Shadow

if TYPE_CHECKING:
    from gateway.context import Context

log = logging.getLogger("specgate.access")


@record
class Loads:
    """What the request's server and its GPU carried while the request ran (for the learner and the log)."""

    load_self: float  # mean over the request's life, itself included
    co_runners: tuple[tuple[Role, float], ...]
    warmup: bool
    prefill_during_decode: int = 0  # prompt tokens this process sent to the GPU that ran inside its decode
    prefills_during_decode: int = 0  # ... and the prompts they came in


class Accounting:
    def __init__(self, settings: Settings, pool: BackendPool, learner: Learner, metrics: Metrics) -> None:
        self.settings = settings
        self.access = AccessLog()
        self.pool = pool
        self.learner = learner
        self.metrics = metrics
        on = settings.shadow_lookup_on(bool(pool.shared_groups()))
        self.shadow = Shadow(settings, learner) if on else None  # n-gram lookup replayed on responses' text

    def capture(self, role: Role) -> bytearray | None:
        """A buffer for a response's bytes when shadow lookup will replay it (`gateway.shadow`), else None."""
        return None if self.shadow is None else self.shadow.capture(role)

    def mean_loads(self, backend: Backend, started: float, areas: tuple[float, tuple[float, ...]],
                   co_runners: tuple[tuple[Role, float], ...], warmup: bool,
                   gpu_prompts_at_first: tuple[int, int] | None = None) -> Loads:
        """The mean loads of the request's server (itself included) and co-runners over its lifetime: a request
        that starts at load 2 and runs through a burst of 20 did not run at load 2."""
        now = time.monotonic()
        span = now - started
        self_area, co_areas = self.pool.group_areas(backend, now)
        prefill = prompts = 0
        if gpu_prompts_at_first is not None:
            tokens_now, prompts_now = self.pool.gpu_prompts(backend)
            prefill, prompts = tokens_now - gpu_prompts_at_first[0], prompts_now - gpu_prompts_at_first[1]
        if span <= 1e-6:
            return Loads(self.pool.load(backend, now), co_runners, warmup, prefill, prompts)
        co = tuple((role, (end - start) / span) for (role, _), start, end in zip(co_runners, areas[1], co_areas,
                                                                                 strict=True))
        return Loads((self_area - areas[0]) / span, co, warmup, prefill, prompts)

    def record(self, ctx: Context, backend: Backend, outcome: Outcome, loads: Loads, e2e: float) -> None:
        if outcome.status == "failed":
            return  # failed attempt: counted by upstream_errors / failovers
        m = self.metrics
        role, cls = backend.role, ctx.routed.task_class
        m.counted(m.requests, backend.name, role, cls, outcome.status).inc()
        d = ctx.routed.decision
        if outcome.status != "200":
            self.access_log(ctx, backend, outcome, e2e, loads)
            return
        m.observed(m.duration, role, cls).observe(e2e)
        if outcome.ttft_s is not None:
            m.observed(m.ttft, role, cls).observe(outcome.ttft_s)
        tokens = outcome.completion_tokens or 0
        m.observe_shape(cls, ctx.routed.bucket, ctx.routed.features.prompt_tokens, tokens)
        if tokens:
            for part_role, part in outcome.tokens_by_role or ((role, tokens),):  # moved: where each part ran
                if part > 0:
                    m.counted(m.output_tokens, part_role, cls).inc(part)
            if tokens > 1 and outcome.ttft_s is not None and ctx.stream:
                m.observed(m.tpot, role, cls).observe((e2e - outcome.ttft_s) / (tokens - 1))
        if d.predicted_e2e_s is not None and role == d.role:
            m.observed(m.predicted, role, cls).observe(d.predicted_e2e_s)
            m.observed(m.prediction_error, role).observe(abs(d.predicted_e2e_s - e2e) / max(e2e, 1e-6))
        if tokens and ctx.routed.features.n == 1 and not outcome.moves:  # a moved request ran on two servers
            self.learner.observe(Observation(
                role=role, task_class=ctx.routed.learner_class or cls, bucket=ctx.routed.bucket,
                prompt_tokens=ctx.routed.features.prompt_tokens, structured=ctx.routed.features.structured_output,
                cached_tokens=ctx.routed.cached_tokens.get(backend.name, 0),  # what the prefix index said it held
                family=ctx.routed.family, temperature=ctx.routed.features.temperature,
                copy_kind=ctx.routed.features.copy_kind,
                completion_tokens=tokens, steps=outcome.steps, ttft_s=outcome.ttft_s or e2e, e2e_s=e2e,
                load_self=loads.load_self, co_runners=loads.co_runners, warmup=loads.warmup,
                prefill_during_decode=loads.prefill_during_decode, prefills_during_decode=loads.prefills_during_decode,
                max_tokens=ctx.routed.features.max_tokens if ctx.routed.features.max_tokens_given else None,
                queued_prefill_tokens=d.queued_tokens if backend.name == d.backend else 0.0,
                # what its acceptance was predicted at, where it was routed on that (not a probe): `core.calibration`
                predicted_tokens_per_step=d.tokens_per_step_raw if backend.name == d.backend and d.reason != "explore"
                else None, read_early=outcome.read_early,
            ))
            if self.shadow is not None and outcome.captured is not None:
                outcome.shadow_tps = self.shadow.observe(
                    role, ctx.payload, ctx.endpoint == CHAT, bytes(outcome.captured),
                    ctx.stream and ctx.movable is None,  # a movable request's capture is its joined answer
                    ctx.routed.learner_class or cls, ctx.routed.bucket, outcome.steps, tokens,
                    ctx.routed.features.prompt_tokens, ctx.routed.family, ctx.routed.features.temperature)
        elif outcome.drafted_part is not None and ctx.routed.features.n == 1:  # moved off its drafts: what they read
            part_tokens, part_steps = outcome.drafted_part
            self.learner.observe_shadow(ctx.routed.learner_class or cls, ctx.routed.bucket,
                                        ctx.routed.features.prompt_tokens, part_tokens / part_steps, part_steps, 1.0,
                                        ctx.routed.family, ctx.routed.features.temperature,
                                        ctx.routed.features.copy_kind)
        self.access_log(ctx, backend, outcome, e2e, loads)

    def access_log(self, ctx: Context, backend: Backend, outcome: Outcome, e2e: float, loads: Loads) -> None:
        if not self.settings.log_requests or not log.isEnabledFor(logging.INFO):
            return
        d = ctx.routed.decision
        line = {
            "event": "request", "id": ctx.request_id, "endpoint": ctx.endpoint, "class": ctx.routed.task_class,
            "backend": backend.role, "instance": backend.name, "reason": d.reason, "ratio": d.ratio,
            "predicted_s": d.predicted_e2e_s, "predicted_ttft_s": d.predicted_ttft_s, "observed_s": round(e2e, 6),
            "predicted_output_tokens": d.output_tokens, "predicted_tokens_per_step": d.tokens_per_step,
            "tokens_per_step_source": d.tokens_per_step_source, "copy_kind": ctx.routed.features.copy_kind,
            "ttft_s": outcome.ttft_s, "status": outcome.status, "completion_tokens": outcome.completion_tokens,
            "engine_steps": outcome.steps, "attempts": ctx.attempts, "prompt_tokens": ctx.routed.features.prompt_tokens,
            "load_self": loads.load_self, "co_runners": loads.co_runners, "group": backend.group,
            "temperature": ctx.routed.bucket,
        }
        if ctx.routed.cached_tokens.get(backend.name):  # the prefix index's guess of its cached prompt tokens there
            line["cached_tokens"] = ctx.routed.cached_tokens[backend.name]
        if d.queued_tokens and backend.name == d.backend:  # prompt tokens priced as queued ahead of it
            line["queued_tokens"] = round(d.queued_tokens)
        if outcome.shadow_tps is not None:  # shadow lookup: the n-gram server's tokens per step on this text
            line["shadow_tps"] = round(outcome.shadow_tps, 3)
        if outcome.moves:  # live migration: the roles it moved to, in order (`backend` is where it started)
            line["moved"] = ",".join(outcome.moves)
            if outcome.moved_why is not None:  # a mid-stream move: the tokens per step and prices it moved on
                line["moved_why"] = outcome.moved_why
        self.access.write(line)
