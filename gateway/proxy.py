"""Relays one completion request: route, send upstream with failover before the first byte, stream back.

Failover: connect errors, timeouts before the first byte and 500/502/503/504 answers are retried on another
routable backend of the chosen role, then of the other role, up to `max_attempts`, with jittered exponential
backoff. Once a byte reached the client, a failure ends the stream with an SSE `error` event. A client that goes
away cancels the handler; the upstream response is closed at once so vLLM aborts the request."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from typing import Any

import aiohttp
from aiohttp import web

from gateway.accounting import Accounting
from gateway.backends import Backend, BackendPool
from gateway.context import Context
from gateway.core.costmodel import OTHER_ROLE, Role
from gateway.core.learner import Learner
from gateway.core.protocol import (
    CHAT,
    GatewayError,
    NoBackendAvailable,
    UpstreamTimeout,
    UpstreamTooLarge,
    UpstreamUnavailable,
)
from gateway.intake import Intake
from gateway.logevents import event_line, log_event
from gateway.metrics import Metrics
from gateway.migrate import RESUME_FAILED, Migrator
from gateway.relay import TOTAL_TIMEOUT, Outcome, Relay, close_client, first_byte_timeout, pump
from gateway.router import Router
from gateway.settings import Settings
from gateway.shadow import CAPTURE_BYTES
from gateway.streaming import COMPLETION_TOKENS, SseTap
from gateway.upstream import (
    CLIENT_ERRORS,
    RETRY_STATUSES,
    ResponseTooLarge,
    StatusFailure,
    UpstreamClient,
    UpstreamFailure,
    map_client_error,
    read_capped,
    request_id,
    response_headers,
    upstream_headers,
)

log = logging.getLogger("specgate.access")


class Proxy:
    def __init__(self, settings: Settings, pool: BackendPool, router: Router, learner: Learner,
                 metrics: Metrics, client_auth_on: bool) -> None:
        self.settings = settings
        self.pool = pool
        self.router = router
        self.learner = learner
        self.metrics = metrics
        self.client_auth_on = client_auth_on
        self.session: aiohttp.ClientSession | None = None  # pass-throughs, /v1/models, peers' warm start
        self.client: UpstreamClient | None = None  # completions (health checks and scrapes have their own)
        self.intake = Intake(settings)
        self.accounting = Accounting(settings, pool, learner, metrics)
        self.stopping = False  # set when the drain is over: streams cancelled from then on say why
        self.migrator = Migrator(settings, pool, router, learner, metrics) \
            if settings.migration or settings.midstream_moves else None
        self._streams: set[asyncio.Task[Any]] = set()

    async def end_streams(self, wait_s: float) -> None:
        """End of a drain: cancel the streams still relaying; each ends with an SSE error event."""
        self.stopping = True
        tasks = set(self._streams)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=wait_s)

    async def handle(self, request: web.Request, endpoint: str) -> web.StreamResponse:
        t0 = time.perf_counter()
        raw = await self.intake.read(request)
        view, changed = await self.intake.prepare(endpoint, raw)
        rid = request_id(request.headers.get("x-request-id"))
        routed = self.router.route(view, rid, session=request.headers.get("x-session-id"))
        if routed is None:
            raise NoBackendAvailable("No healthy backend is available.")
        d = routed.decision
        self.metrics.counted(self.metrics.decisions, d.role, routed.task_class, d.reason).inc()
        headers = dict(upstream_headers(request.headers, self.settings, self.client_auth_on, rid))
        headers["Content-Type"] = "application/json"
        ctx = Context(request, endpoint, t0, rid, routed, view.stream, changed is not None,
                      raw if changed is None else changed, headers, first_byte_timeout(self.settings, view))
        if self.migrator is not None:
            if self.settings.migration:
                self.migrator.switched()  # a switch this decision made moves the leaving server's streams
            self.migrator.prepare(ctx)
        try:
            return await self._with_failover(ctx)
        finally:  # a shared GPU's switch prices the drain of what still runs there (`core.regime.remaining`)
            if routed.running is not None:
                routed.running.done = True

    async def _with_failover(self, ctx: Context) -> web.StreamResponse:
        """Connect failures blame the backend at once. A suspect failure (5xx answer, redirect, timeout) may be the
        request's own doing: it blames the backend only if another backend then serves the request; when a second
        backend fails it too, the request is the cause: no blame, no more tries. A blameless one blames nobody."""
        role = ctx.routed.decision.role
        tried: set[Backend] = set()
        suspects: list[tuple[Backend, UpstreamFailure]] = []
        last: tuple[UpstreamFailure, Backend] | None = None  # the last failure and the backend that failed
        while ctx.attempts < self.settings.max_attempts:
            preferred = None if ctx.attempts else ctx.routed.decision.backend
            backend = self._next_backend(role, frozenset(tried), again=not suspects, preferred=preferred,
                                         off=ctx.routed.off_model)  # never a backend without the model
            if backend is None:
                break
            if ctx.attempts:
                await asyncio.sleep(self.settings.backoff_base_s * (2 ** (ctx.attempts - 1)) * random.uniform(0.5, 1.5))
            ctx.attempts += 1
            tried.add(backend)
            try:
                response = await self._attempt(ctx, backend)
            except UpstreamFailure as failure:
                last = (failure, backend)
                if not failure.suspect:
                    if not failure.blameless:  # a move the gateway could not resume: tried again, nobody blamed
                        self.pool.record_failure(backend, failure.reason)
                elif suspects:
                    suspects.append((backend, failure))
                    _warn(event="request_caused_failure", id=ctx.request_id, backend=backend.name,
                          reason=failure.reason)
                    break
                else:
                    suspects.append((backend, failure))
                self.metrics.failovers.labels(backend.name, backend.role).inc()
                _warn(event="failover", id=ctx.request_id, backend=backend.name, reason=failure.reason)
                continue
            for suspect, why in suspects:  # another backend served it: the suspects failed on their own
                self.pool.record_failure(suspect, why.reason)
            suspects.clear()
            return response
        for suspect, why in suspects:  # no other backend served it: counted, never blamed
            self.metrics.upstream_errors.labels(suspect.name, suspect.role, why.reason).inc()
        return self._exhausted(ctx, last)

    def _next_backend(self, role: Role, tried: frozenset[Backend], again: bool,
                      preferred: str | None = None, off: frozenset[Backend] = frozenset()) -> Backend | None:
        """The decision's own backend first; then untried ones, the same role first; then (if `again`) any routable."""
        now = time.monotonic()
        backend = self.pool.by_name(preferred, now) if preferred is not None else None
        tried = tried | off if off else tried
        backend = backend or self.pool.pick(role, now, tried) or self.pool.pick(OTHER_ROLE[role], now, tried)
        if backend is None and again:
            backend = self.pool.pick(role, now, off) or self.pool.pick(OTHER_ROLE[role], now, off)
        return backend

    def _exhausted(self, ctx: Context, failed: tuple[UpstreamFailure, Backend] | None) -> web.StreamResponse:
        """Every attempt failed: pass the last upstream error answer through, else our own error."""
        if failed is None:
            raise NoBackendAvailable("No healthy backend is available.")
        last, backend = failed
        if isinstance(last, StatusFailure):
            self.metrics.requests.labels(backend.name, backend.role, ctx.routed.task_class, str(last.status)).inc()
            headers = response_headers(last.headers)
            headers.update(self._headers(ctx, backend))
            return web.Response(status=last.status or 502, body=last.body, headers=headers)
        error: GatewayError = (UpstreamTimeout(f"Upstream timed out after {ctx.attempts} attempt(s).")
                               if last.reason == "timeout" else
                               UpstreamUnavailable(f"Upstream failed after {ctx.attempts} attempt(s): {last}"))
        self.metrics.requests.labels(backend.name, backend.role, ctx.routed.task_class, str(error.status)).inc()
        raise error

    def _headers(self, ctx: Context, backend: Backend, extra: dict[str, str] | None = None) -> dict[str, str]:
        d = ctx.routed.decision
        reason = d.detail if backend.role == d.role else f"failover from {d.role}: {d.detail}"
        headers = {"x-specgate-backend": backend.role, "x-specgate-instance": backend.name,
                   "x-specgate-class": ctx.routed.task_class, "x-specgate-reason": reason,
                   "x-request-id": ctx.request_id}
        if extra:
            headers.update(extra)
        return headers

    async def _attempt(self, ctx: Context, backend: Backend) -> web.StreamResponse:
        assert self.client is not None
        started, lag_before = time.monotonic(), self.pool.loop_lag.reading()  # the loop's lag: `excuse_stall`
        co_runners, warmup = self.pool.co_runners(backend, started), self.pool.warming_up(backend)
        self.pool.acquire(backend, ctx.routed.features.prompt_tokens, ctx.routed.cached_tokens.get(backend.name, 0))
        areas = self.pool.group_areas(backend, started)
        outcome = Outcome(status="aborted", sent_so_far=self.pool.sent_so_far(backend))
        resp: aiohttp.ClientResponse | None = None
        try:
            if not ctx.overhead_recorded:
                ctx.overhead_recorded = True
                self.metrics.observed(self.metrics.overhead).observe(time.perf_counter() - ctx.t0)
            async with asyncio.timeout(ctx.first_byte_timeout_s) as deadline:
                try:
                    sent = ctx.headers
                    if backend.auth is not None and "Authorization" not in sent:  # credentials from its URL
                        sent = {**sent, "Authorization": backend.auth}
                    resp = await self.client.post(backend.url, ctx.endpoint, ctx.payload, sent)
                except (*CLIENT_ERRORS, TimeoutError) as exc:
                    raise map_client_error(exc) from None
                if resp.status in RETRY_STATUSES:
                    body = await _read_or_fail(resp, self.settings.max_response_bytes)
                    raise StatusFailure(resp.status, body, resp.headers)
                if 300 <= resp.status < 400:
                    raise UpstreamFailure("protocol", f"upstream answered a redirect ({resp.status}); not followed",
                                          suspect=True)
                if resp.status == 200 and ctx.movable is not None and not ctx.stream \
                        and resp.content_type == "text/event-stream":  # streamed upstream, joined (else: as it is)
                    first = await _readany_or_fail(resp)
                    deadline.reschedule(None)
                    return await self._join_answer(ctx, backend, resp, first, outcome)
                if ctx.stream and resp.status == 200:
                    first = await _readany_or_fail(resp)
                    if not first:
                        raise UpstreamFailure("protocol", "upstream closed the stream before the first byte")
                    deadline.reschedule(None)
                    return await self._relay_stream(ctx, backend, resp, first, outcome)
                data = await _read_or_fail(resp, self.settings.max_response_bytes)
            return self._answer(ctx, backend, resp, data, outcome)
        except Exception as exc:
            failure = _attempt_failure(ctx, backend, outcome, exc)
            self.pool.excuse_stall(failure, backend, started, lag_before, ctx.first_byte_timeout_s)
            if failure is exc:
                raise
            raise failure from None
        finally:
            if resp is not None:
                resp.close()
            self.pool.release(backend)
            # Metrics, learning and the access log run after the response is handed back, off its latency.
            e2e = time.perf_counter() - ctx.t0
            loads = self.accounting.mean_loads(backend, started, areas, co_runners, warmup,
                                               outcome.gpu_prompts_at_first)
            asyncio.get_running_loop().call_soon(self.accounting.record, ctx, backend, outcome, loads, e2e)

    def _answer(self, ctx: Context, backend: Backend, resp: aiohttp.ClientResponse, data: bytes,
                outcome: Outcome) -> web.Response:
        """A whole (non-streamed) answer, passed through with our headers."""
        self.pool.record_success(backend)
        outcome.status = str(resp.status)
        outcome.ttft_s = time.perf_counter() - ctx.t0
        if resp.status == 200:
            found = COMPLETION_TOKENS.findall(data)
            outcome.completion_tokens = int(found[-1]) if found else None
            if self.accounting.capture(backend.role) is not None:
                outcome.captured = data
        headers = response_headers(resp.headers)
        headers.update(self._headers(ctx, backend))
        return web.Response(status=resp.status, body=data, headers=headers)

    async def _relay_stream(self, ctx: Context, backend: Backend, resp: aiohttp.ClientResponse, first: bytes,
                            outcome: Outcome) -> web.StreamResponse:
        outcome.ttft_s = time.perf_counter() - ctx.t0
        outcome.gpu_prompts_at_first = self.pool.gpu_prompts(backend, outcome.sent_so_far)
        headers = response_headers(resp.headers)
        headers.update(self._headers(ctx, backend))
        headers["Cache-Control"] = "no-cache"
        headers["X-Accel-Buffering"] = "no"
        out = web.StreamResponse(status=200, headers=headers)
        await out.prepare(ctx.request)
        outcome.captured = self.accounting.capture(backend.role)  # the shadow's replay, if one is due
        if ctx.movable is not None and self.migrator is not None:  # there: the joined answer (`Migrator.stream`)
            return await self._relay_movable(ctx, backend, resp, first, outcome, out)
        tap = SseTap(strip_usage=ctx.strip_usage, chat=ctx.endpoint == CHAT, capture_limit=CAPTURE_BYTES)
        tap.capture = outcome.captured
        relay = Relay(out, tap)
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        try:
            gaps = self.metrics.observed(self.metrics.inter_chunk, backend.role, ctx.routed.task_class)
            error = await pump(resp, relay, first, self.settings.idle_timeout_s, gaps)
        except asyncio.CancelledError:
            if self.stopping:  # the drain ran out: tell the client why its stream ends
                with contextlib.suppress(Exception):
                    await relay.error("gateway shutting down", outcome)
            raise
        finally:
            self._streams.discard(task)
        if error == "client_stalled":
            outcome.status = "aborted"
            _warn(event="client_stalled", id=ctx.request_id, backend=backend.name)
            close_client(ctx.request)
            return out
        rest = tap.flush()
        if rest:
            await out.write(rest)
            relay.last_out = rest
        if error is None and not tap.done:
            error = "upstream stream ended without [DONE]"
        outcome.completion_tokens = tap.completion_tokens
        outcome.steps = tap.engine_steps
        if error is not None:
            if error != TOTAL_TIMEOUT:  # a stream longer than the total timeout is the request's own doing
                self.pool.record_failure(backend, "midstream")
            await relay.error(error, outcome)
            _warn(event="midstream_error", id=ctx.request_id, backend=backend.name, error=error)
            close_client(ctx.request)  # the client must see a closed connection, not a clean end
            return out
        outcome.status = "200"
        self.pool.record_success(backend)  # only a stream that ended cleanly clears the failure count
        await out.write_eof()
        return out

    async def _join_answer(self, ctx: Context, backend: Backend, resp: aiohttp.ClientResponse, first: bytes,
                           outcome: Outcome) -> web.Response:
        """A movable non-streamed request: its answer joined from the upstream stream (`gateway.migrate`)."""
        assert self.migrator is not None
        outcome.captured = self.accounting.capture(backend.role)  # the shadow replays the joined answer
        error, data = await self.migrator.collect(ctx, backend, resp, first, outcome)
        outcome.ttft_s = time.perf_counter() - ctx.t0  # as for any non-streamed answer: when the whole answer came
        if error == TOTAL_TIMEOUT:  # as a whole answer read past the total timeout: a 504
            raise TimeoutError(error)
        if error is not None:  # nothing reached the client yet: tried again (a move not resumed blames nobody)
            lost = error == RESUME_FAILED
            raise UpstreamFailure("resume_failed" if lost else "midstream", error, suspect=not lost, blameless=lost)
        outcome.status = "200"
        self.pool.record_success(backend)
        headers = response_headers(resp.headers)  # the first part's, as a non-streamed answer passes them through
        headers.update(self._headers(ctx, backend))
        headers["Content-Type"] = "application/json"
        return web.Response(status=200, body=data, headers=headers)

    async def _relay_movable(self, ctx: Context, backend: Backend, resp: aiohttp.ClientResponse, first: bytes,
                             outcome: Outcome, out: web.StreamResponse) -> web.StreamResponse:
        """A stream that may move to the other server of its GPU on a switch (`gateway.migrate`)."""
        assert self.migrator is not None
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        try:
            error = await self.migrator.stream(ctx, backend, resp, first, self.migrator.relay(ctx, out), outcome)
        except asyncio.CancelledError:
            if self.stopping:
                with contextlib.suppress(Exception):
                    await Relay(out, SseTap(strip_usage=False, chat=False)).error("gateway shutting down", outcome)
            raise
        finally:
            self._streams.discard(task)
        if error is not None:
            if error == "client_stalled":
                outcome.status = "aborted"
            else:
                await Relay(out, SseTap(strip_usage=False, chat=False)).error(error, outcome)
            _warn(event="midstream_error", id=ctx.request_id, backend=backend.name, error=error)
            close_client(ctx.request)
            return out
        outcome.status = "200"
        self.pool.record_success(backend)
        await out.write_eof()
        return out


def _warn(event: str, **fields: object) -> None:
    log_event(log, logging.WARNING, event, **fields)


def _attempt_failure(ctx: Context, backend: Backend, outcome: Outcome, exc: Exception) -> Exception:
    """What a failed attempt raises (`exc` itself: re-raised as it is), its outcome status set for the record.
    Called inside the `except` block, so `log.exception` keeps the traceback."""
    if isinstance(exc, TimeoutError):
        outcome.status = "failed"
        return UpstreamFailure("timeout", f"no answer from upstream within {ctx.first_byte_timeout_s:g} s",
                               suspect=True, timed_out=True)
    if isinstance(exc, UpstreamFailure):
        outcome.status = "failed"
        return exc
    if isinstance(exc, ResponseTooLarge):  # the request's own answer: not retried, no blame
        outcome.status = "502"
        return UpstreamTooLarge(f"Upstream answer too large: {exc}.")
    outcome.status = "error"
    log.exception(event_line("attempt_error", id=ctx.request_id, backend=backend.name))
    return exc


async def _read_or_fail(resp: aiohttp.ClientResponse, limit: int) -> bytes:
    try:
        return await read_capped(resp, limit)
    except CLIENT_ERRORS as exc:
        raise map_client_error(exc) from None


async def _readany_or_fail(resp: aiohttp.ClientResponse) -> bytes:
    try:
        return await resp.content.readany()
    except CLIENT_ERRORS as exc:
        raise map_client_error(exc) from None


def gateway_error_response(err: GatewayError) -> web.Response:
    return web.Response(status=err.status, body=err.body(), content_type="application/json")
