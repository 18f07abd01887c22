"""Live migration: when a shared GPU switches regime, the leaving server's running, movable streams move to the
arriving server (`gateway.core.migration` decides and joins; this module does the I/O).

A movable stream is relayed event by event (never half an event, so the client has exactly the text the resume
starts from). On a switch the router records, `Migrator.switched` picks the leaving server's streams whose
predicted remaining time exceeds their re-prefill on the arriving server and closes their upstream responses
(vLLM aborts a request whose connection closes); each stream's own task then sends the resume to the arriving
server of the same GPU group (the leaving one if that fails) and relays it joined onto the client's stream.

On a fleet (`SPECGATE_MIDSTREAM_MOVES`), a movable stream on a speculative server is looked at every few engine steps
(`gateway.core.midstream`): where its own recent tokens per step make staying dearer than a re-prefill on the
least-loaded baseline server, it moves there the same way (reason `acceptance`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson
from aiohttp import web

from gateway.backends import Backend, BackendPool
from gateway.context import Context
from gateway.core.costmodel import Role
from gateway.core.learner import Learner
from gateway.core.midstream import Destination, MidstreamConfig, Running, StepWindow, due, judge
from gateway.core.migration import (
    StreamJoin,
    joined_answer,
    move_extra_s,
    moving_pays,
    not_movable,
    remaining_s,
    resume_body,
    stop_strings,
)
from gateway.core.protocol import CHAT
from gateway.core.switch_migration import MovePlan
from gateway.join_relay import JoinRelay, Stopped
from gateway.logevents import log_event
from gateway.metrics import Metrics
from gateway.relay import TOTAL_TIMEOUT, Outcome, pump
from gateway.router import Router
from gateway.settings import Settings
from gateway.upstream import CLIENT_ERRORS, ResponseTooLarge, UpstreamClient

log = logging.getLogger("specgate.migrate")
TOO_LARGE = "upstream answer over the size limit"
RESUME_FAILED = "upstream stream ended and the request could not be resumed"
EARLY_READ_STEPS = 17  # a trial's running stream is read for acceptance at its 16th decode step (one answer's weight)


@dataclass(slots=True, eq=False)
class Live:
    """One movable stream while it runs."""

    ctx: Context
    body: dict[str, Any]
    join: StreamJoin
    backend: Backend
    resp: aiohttp.ClientResponse
    move_to: Role | None = None
    moved_at: float = 0.0
    moves: list[str] = field(default_factory=list)  # the roles it moved to, in order
    target: Backend | None = None  # a mid-stream move's destination (a switch: the arriving server of the group)
    reason: str = "switch"
    window: StepWindow | None = None  # its tokens per step, where mid-stream moves watch it
    why: str | None = None  # a mid-stream move's reason (the access log's `moved_why`) ...
    drafted_part: tuple[int, int] | None = None  # ... and the tokens and engine steps it made where it started


class Migrator:
    def __init__(self, settings: Settings, pool: BackendPool, router: Router, learner: Learner,
                 metrics: Metrics) -> None:
        self.settings, self.pool, self.router, self.learner, self.metrics = settings, pool, router, learner, metrics
        self.live: dict[str, set[Live]] = {g: set() for g in router.regimes}
        self._roles = {g: r.role for g, r in router.regimes.items()}
        self.client: UpstreamClient | None = None
        self.midstream = MidstreamConfig() if settings.midstream_moves else None
        if settings.regime_migration_free_switch:  # a switch is also free when what it moves pays for itself
            router.migration_plan = self.plan

    def switched(self) -> None:
        """After a routing decision: move the running streams off each GPU whose regime just switched."""
        for group, state in self.router.regimes.items():
            if state.role != self._roles.get(group):
                self._roles[group] = state.role
                self._move_group(group, state.role)

    def _move_group(self, group: str, to: Role) -> None:
        now = time.monotonic()
        for live, worth, _, _ in self._candidates(group, to, now):
            if not worth:
                self.metrics.counted(self.metrics.migrations, "not_worth").inc()
                continue
            live.move_to, live.moved_at = to, now
            live.resp.close()  # vLLM aborts the request; the stream's task resumes it on `to`

    def plan(self, group: str, to: Role) -> MovePlan:
        """What switching `group` to `to` now would move: how many streams, their summed prefill on `to` and what
        moving costs them (the router prices a switch net of it: `gateway.core.switch_migration.net_switch_price`)."""
        movers = [(reprefill, extra) for _, worth, reprefill, extra in self._candidates(group, to, time.monotonic())
                  if worth]
        return MovePlan(len(movers), sum(r for r, _ in movers), sum(e for _, e in movers))

    def _candidates(self, group: str, to: Role, now: float) -> list[tuple[Live, bool, float, float]]:
        """The group's streams on the other role's server: each, whether it ends sooner moved to `to` than left to
        co-run (`moving_pays`), its prefill there (its prompt, less what that server's prefix cache holds of it as
        the router last saw it, plus the text so far) and what the move costs it (`move_extra_s`)."""
        lrn = self.learner
        prefill = lrn.prefill_s_per_token(to)
        arriving = [b for b in self.pool.groups.get(group, []) if b.role == to]
        load_to = max(sum(self.pool.load(b, now) for b in arriving), 1.0)
        own_to, own_joined = lrn.step_model(to).own_s(load_to), lrn.step_model(to).own_s(load_to + 1)
        out = []
        for live in self.live.get(group, ()):
            leaving = live.backend
            if leaving.role == to or live.move_to is not None or not live.join.resumable:
                continue
            r, f, done = live.ctx.routed, live.ctx.routed.features, live.join.completion_tokens
            tps = lrn.tokens_per_step_posterior(r.task_class, r.bucket)[0]
            own_leaving = lrn.step_model(leaving.role).own_s(max(self.pool.load(leaving, now), 1.0))
            expected = lrn.output_tokens(r.task_class, r.bucket, f.max_tokens, f.max_tokens_given)
            stay = remaining_s(expected, done, tps if leaving.role == "speculative" else 1.0, own_leaving)
            there = remaining_s(expected, done, tps if to == "speculative" else 1.0, own_joined)
            cached = max((r.cached_tokens.get(b.name, 0) for b in arriving), default=0)
            reprefill = prefill * (max(f.prompt_tokens - cached, 0) + done)
            spent = f.max_tokens_given and f.max_tokens - done < 2
            worth = not spent and moving_pays(stay, there, reprefill, own_to / own_leaving)
            out.append((live, worth, reprefill, move_extra_s(stay, there, reprefill)))
        return out

    def _watched(self, backend: Backend) -> bool:
        """A fleet's speculative server (a GPU of its own) while the fleet has a baseline server: mid-stream moves
        watch the streams it serves."""
        return self.midstream is not None and backend.role == "speculative" \
            and backend.group not in self.router.regimes and bool(self.pool.by_role("baseline"))

    def _look(self, live: Live) -> None:
        """After an upstream event of a watched stream: every few engine steps, move it to the least-loaded baseline
        server when its own recent tokens per step make staying dearer (`gateway.core.midstream.judge`)."""
        cfg, window, join = self.midstream, live.window, live.join
        if cfg is None or window is None or live.move_to is not None or not join.resumable \
                or live.backend.role != "speculative" or not window.feed(join.completion_tokens) \
                or not due(window.steps, window.last_look, cfg):
            return
        window.last_look = window.steps
        now, ctx = time.monotonic(), live.ctx
        dest = self.pool.pick("baseline", now, exclude=ctx.routed.off_model)
        if dest is None:
            return
        lrn, f, tokens = self.learner, ctx.routed.features, join.completion_tokens
        here, there = lrn.step_model("speculative"), lrn.step_model("baseline")
        load_here, load_there = max(self.pool.load(live.backend, now), 1.0), self.pool.load(dest, now)
        cached = ctx.routed.cached_tokens.get(dest.name, 0)
        run = Running(tokens, *window.recent(), f.max_tokens - tokens if f.max_tokens_given else None,
                      here.own_s(load_here), load_here - 1.0, here.per_request_s)
        to = Destination(there.own_s(load_there + 1.0), load_there, there.per_request_s,
                         lrn.prefill_s_per_token("baseline") * (max(f.prompt_tokens - cached, 0) + tokens))
        call = judge(run, to, cfg)
        if not call.move:
            return
        live.move_to, live.moved_at, live.target, live.reason, live.why = "baseline", now, dest, "acceptance", \
            call.reason()
        live.drafted_part = (tokens, window.steps + 1)  # + the prefill's step
        log_event(log, logging.INFO, "midstream_move", id=ctx.request_id, backend=live.backend.name, to=dest.name,
                  why=live.why)
        live.resp.close()  # the server aborts it; the stream's task resumes it on `dest`

    def _read_early(self, live: Live, outcome: Outcome) -> None:
        """After an upstream event of a stream on a shared GPU's speculative server: while its regime is a trial
        (started on hope, `gateway.core.regime`), read the stream's acceptance once it has made `EARLY_READ_STEPS`
        engine steps, as one of the server's answers (`Learner.observe_early`): a trial is judged on these, and
        on conversation traffic its first answers ran for seconds while every arrival went to it."""
        join, ctx = live.join, live.ctx
        if outcome.read_early is not None or join.steps < EARLY_READ_STEPS or live.moves \
                or not self.router.regimes[live.backend.group].trial:
            return
        outcome.read_early = (join.completion_tokens, join.steps)
        r = ctx.routed
        self.learner.observe_early(r.learner_class or r.task_class, r.bucket, r.features.prompt_tokens,
                                   join.completion_tokens, join.steps, r.family, r.features.temperature,
                                   r.features.copy_kind)

    def prepare(self, ctx: Context) -> None:
        """Mark a request that may move: to a shared GPU (on a switch), or to a fleet's speculative server with
        mid-stream moves on. Its upstream is asked for a stream (a non-streamed request too: the gateway joins its
        answer) with usage on every chunk (the tokens so far, which the resume's `max_tokens` and the joined usage
        need)."""
        backend = self.pool.by_name(ctx.routed.decision.backend, time.monotonic())
        if backend is None:
            return
        if not (self.settings.migration and backend.group in self.router.regimes) and not self._watched(backend):
            return
        body = orjson.loads(ctx.payload)
        if not isinstance(body, dict) or not_movable(ctx.endpoint == CHAT, body) is not None:
            return
        ctx.movable = body
        options = body.get("stream_options")
        ctx.payload = orjson.dumps({**body, "stream": True, "stream_options": {
            **(options if isinstance(options, dict) else {}), "include_usage": True, "continuous_usage_stats": True}})

    async def collect(self, ctx: Context, backend: Backend, resp: aiohttp.ClientResponse, first: bytes,
                      outcome: Outcome) -> tuple[str | None, bytes]:
        """A movable non-streamed request: its upstream stream joined into one answer (moving it on switches); the
        error that ended it, if any, and the answer's JSON."""
        body = ctx.movable
        assert body is not None
        join = self._join(ctx, body, client_usage=True, continuous=False)
        relay = JoinRelay(None, join, self.settings.max_response_bytes)
        error = await self.stream(ctx, backend, resp, first, relay, outcome)
        return error, orjson.dumps(joined_answer(join))

    def relay(self, ctx: Context, out: web.StreamResponse) -> JoinRelay:
        """The client side of a movable stream."""
        body = ctx.movable
        assert body is not None
        options = body.get("stream_options")
        usage = not ctx.strip_usage  # continuous usage only with include_usage, as vLLM reads them
        continuous = usage and isinstance(options, dict) and bool(options.get("continuous_usage_stats"))
        return JoinRelay(out, self._join(ctx, body, usage, continuous), self.settings.max_response_bytes)

    @staticmethod
    def _join(ctx: Context, body: dict[str, Any], client_usage: bool, continuous: bool) -> StreamJoin:
        return StreamJoin(ctx.endpoint == CHAT, client_usage, continuous, stop_strings(body),
                          bool(body.get("include_stop_str_in_output")))

    async def stream(self, ctx: Context, backend: Backend, resp: aiohttp.ClientResponse, first: bytes,
                     relay: JoinRelay, outcome: Outcome) -> str | None:
        """Relay a movable stream to its end, moving it on switches; the error that ended it, if any."""
        body, join = ctx.movable, relay.join
        assert body is not None
        live = Live(ctx, body, join, backend, resp)
        if self.midstream is not None and self._watched(backend):
            live.window = StepWindow(self.midstream.window)
            relay.watch = lambda: self._look(live)
        elif backend.role == "speculative" and backend.group in self.router.regimes:
            relay.watch = lambda: self._read_early(live, outcome)
        group = self.live.setdefault(backend.group, set())
        group.add(live)
        try:
            error = await self._parts(live, relay, first)
        finally:
            group.discard(live)
            if live.resp is not resp:  # a resumed response is ours to close (the proxy closes the first)
                live.resp.close()
            if live.backend is not backend:  # the proxy releases the backend it acquired
                self.pool.release(live.backend)
                self.pool.acquire(backend)
            outcome.moves, outcome.moved_why, outcome.drafted_part = tuple(live.moves), live.why, live.drafted_part
            outcome.completion_tokens, outcome.steps = join.completion_tokens, join.steps
            if live.moves:
                roles, counts = [backend.role, *live.moves], [*join.part_counts, join.part_tokens]
                outcome.tokens_by_role = tuple(zip(roles, counts, strict=False))  # a failed resume: one count more
            if outcome.captured is not None:  # asked for by the shadow (`gateway.shadow`): the answer, joined
                outcome.captured = orjson.dumps(joined_answer(join))
        if error is None and not relay.done and join.stopped is None:
            error = "upstream stream ended without [DONE]"
        if error is not None and error not in ("client_stalled", TOTAL_TIMEOUT, RESUME_FAILED) \
                and not error.startswith(TOO_LARGE):  # a resume that failed is not the leaving server's fault
            self.pool.record_failure(live.backend, "midstream")
        return error

    async def _parts(self, live: Live, relay: JoinRelay, first: bytes) -> str | None:
        gaps = self.metrics.observed(self.metrics.inter_chunk, live.backend.role, live.ctx.routed.task_class)
        while True:
            try:
                error = await pump(live.resp, relay, first, self.settings.idle_timeout_s, gaps)
            except Stopped:
                live.resp.close()
                await relay.close_cut()
                return None
            except ResponseTooLarge as exc:  # the request's own answer: no blame on the server, never retried
                live.resp.close()
                if relay.out is None:
                    raise  # a non-streamed request: a 502 `upstream_response_too_large`, as a whole answer's
                return f"{TOO_LARGE}: {exc}"
            to = live.move_to
            if to is not None and relay.done:  # it ended as it was moved: the break is the move's own close
                return None
            if to is None:
                return error
            resumed = await self._resume(live, to)
            if resumed is None:
                self.metrics.counted(self.metrics.migrations, "resume_failed").inc()
                return RESUME_FAILED
            first = resumed
            relay.buf.clear()  # half an event of the part that was cut: never relayed, never resumed from
            live.move_to = None

    async def _resume(self, live: Live, to: Role) -> bytes | None:
        """Send the resume to the arriving server of the GPU group, or a mid-stream move's target (else back to the
        leaving one); its first bytes."""
        ctx, join = live.ctx, live.join
        join.seam()
        body = resume_body(ctx.endpoint == CHAT, live.body, join.text, join.tokens)
        if body is None:
            return None
        payload = orjson.dumps(body)
        leaving = live.backend
        members = self.pool.groups.get(leaving.group, [])
        off = ctx.routed.off_model  # never a server without the request's model
        arriving = [b for b in members if b.role == to and b not in off and b.routable(time.monotonic())]
        if live.target is not None:
            arriving, live.target = [live.target], None
        for backend in [*arriving, leaving]:
            headers = ctx.headers  # as `Proxy._attempt`: a URL's credentials only where none are forwarded
            if backend.auth is not None and "Authorization" not in headers:
                headers = {**headers, "Authorization": backend.auth}
            answered = await self._first_bytes(backend, ctx, payload, headers)
            if answered is None:
                continue
            resp, first = answered
            self.pool.release(live.backend)
            self.pool.acquire(backend, ctx.routed.features.prompt_tokens + join.tokens)
            live.backend, live.resp = backend, resp
            reason = live.reason if backend.role == to else "resume_on_leaving"
            live.moves.append(backend.role)
            self.metrics.counted(self.metrics.migrations, reason).inc()
            self.metrics.observed(self.metrics.migration_latency).observe(time.monotonic() - live.moved_at)
            log_event(log, logging.INFO, "request_moved", id=ctx.request_id, to=backend.name, role=backend.role,
                      reason=reason, tokens=join.tokens, chars=len(join.text))
            return first
        return None

    async def _first_bytes(self, backend: Backend, ctx: Context, payload: bytes,
                           headers: dict[str, str]) -> tuple[aiohttp.ClientResponse, bytes] | None:
        """The resumed request's response and first bytes from `backend`, or None when it does not answer 200."""
        assert self.client is not None
        resp: aiohttp.ClientResponse | None = None
        try:
            async with asyncio.timeout(ctx.first_byte_timeout_s):
                resp = await self.client.post(backend.url, ctx.endpoint, payload, headers)
                if resp.status == 200 and (first := await resp.content.readany()):
                    return resp, first
        except (*CLIENT_ERRORS, TimeoutError):
            pass
        except BaseException:
            if resp is not None:
                resp.close()
            raise
        if resp is not None:
            resp.close()
        return None
