"""The backend pool: in-flight counts, the load routing uses, health, outlier ejection, vLLM scrapes.

Load: each backend's running + waiting requests as the server itself reports them (read every
`load_scrape_interval_s`), plus what this process dispatched to it and minus what it completed since that
scrape was sent, and never below this process's own in-flight count. One process stays exact; N processes
(workers, replicas) agree, because the server's count includes everyone's requests. Where the scrape
fails or is older than `load_stale_s`, the process's own in-flight count is used.

State changes come from the request path (`acquire`/`release`, `record_success`/`record_failure`) and
from two background loops (health polling and `/metrics` scraping) that run in the app's cleanup context.
Ejection: `eject_consecutive_failures` failures in a row, or a failed health check, take a backend out
of rotation for a cooldown that doubles on each repeat (capped); it returns only after a passing check. A health
check that timed out while the loop itself stalled (`core.stall`, measured by `looplag`) is tried again, not counted
(unless it goes on for `STALLED_CHECKS_MAX` checks in a row while another backend answers: a loop that always lags
would hide a hanging backend); a completion attempt's timeout in such a stall blames nobody (`excuse_stall`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal, TypeVar

import aiohttp

from gateway.core.costmodel import Role
from gateway.core.stall import stall_still_excuses
from gateway.core.vllm_metrics import SpecDelta, VllmSnapshot, parse_load, parse_vllm_metrics, spec_delta
from gateway.logevents import log_event
from gateway.looplag import LoopLag
from gateway.metrics import Metrics
from gateway.settings import Settings
from gateway.upstream import (
    CLIENT_ERRORS,
    ResponseTooLarge,
    UpstreamFailure,
    read_capped,
    url_credentials,
    without_credentials,
)

SCRAPE_TIMEOUT_S = 2.0  # a health check or a /metrics scrape, whole
INLINE_PARSE_BYTES = 1 << 16  # a real vLLM /metrics is ~50 KB: parsed on the loop; larger pages in a thread
HEALTH_TRIES = 2  # tries of a health check whose timeouts the loop's own stalls excuse
_Answer = tuple[int, bytes] | Literal["failed", "timeout"]  # a probe's status and body, or why there is none
_In = TypeVar("_In")
_Out = TypeVar("_Out")

log = logging.getLogger("specgate.backends")


@dataclass(slots=True, eq=False)
class Backend:
    name: str
    role: Role
    url: str
    group: str = ""  # GPU group: backends with the same group share a GPU
    auth: str | None = None  # Authorization from credentials in its URL (kept out of the URL everywhere)
    inflight: int = 0
    dispatched: int = 0  # requests sent, ever (this process)
    completed: int = 0  # requests finished, ever (this process)
    scraped_load: float | None = None  # running + waiting as the server reported it
    scraped_at: float = -1e18  # monotonic time the scrape that reported it was sent
    dispatched_at_scrape: int = 0
    completed_at_scrape: int = 0
    sent_since_up: int = 0  # requests sent since it was (re)admitted: the first are warm-up
    prompt_tokens_sent: int = 0  # estimated prompt tokens of the requests this process sent it, ever
    prompt_tokens_at_scrape: int = 0  # ... as of when the last load scrape was sent
    snapshot_prompt_tokens: int = 0  # ... as of when `snapshot`'s scrape was sent (the pair `calibrate` reads)
    prompts_sent: int = 0  # requests with a prompt this process sent it, ever
    prefill_tokens_sent: int = 0  # ... their prompt tokens it likely had to prefill (not in its prefix cache)
    # (monotonic time sent, prompt tokens) of the requests in flight, oldest first (the prefill queue's input)
    sent: deque[tuple[float, int]] = field(default_factory=deque)
    load_area: float = 0.0  # ∫ load dt up to `area_t` (request·seconds): a request's mean load is Δarea / Δt
    area_t: float = 0.0
    area_load: float = 0.0  # the load since `area_t`
    healthy: bool = True  # optimistic until the first health check says otherwise
    ejected_until: float = 0.0
    ejections: int = 0
    consecutive_failures: int = 0
    stalled_checks: int = 0  # health checks in a row whose timeouts a stall of the gateway's loop excused
    snapshot: VllmSnapshot | None = None
    last_spec: SpecDelta | None = None

    def routable(self, now: float) -> bool:
        return self.healthy and now >= self.ejected_until


class BackendPool:
    def __init__(self, settings: Settings, metrics: Metrics,
                 on_spec_delta: Callable[[Backend, SpecDelta], None] | None = None) -> None:
        self.settings = settings
        self.metrics = metrics
        self.on_spec_delta = on_spec_delta
        self._load_stale_s = settings.load_stale_s  # read on every load lookup
        self.backends: list[Backend] = []
        for spec in settings.topology():
            backend = Backend(name=spec.name, role=spec.role, url=without_credentials(spec.url), group=spec.group,
                              auth=url_credentials(spec.url))
            self.backends.append(backend)
            metrics.register_backend(backend.name, backend.role, backend.group)
        self._by_name = {b.name: b for b in self.backends}
        self.groups: dict[str, list[Backend]] = {}
        for b in self.backends:
            self.groups.setdefault(b.group, []).append(b)
        # each backend's co-runners (the others on its GPU), looked up on every decision
        self.co_members: dict[str, tuple[Backend, ...]] = {
            b.name: tuple(o for o in self.groups[b.group] if o is not b) for b in self.backends}
        self._gauges = {
            b.name: (metrics.inflight.labels(b.name, b.role), metrics.up.labels(b.name, b.role))
            for b in self.backends
        }
        for b in self.backends:
            self._gauges[b.name][1].set(1)
        self._probe_headers = {b.name: {**self.auth_headers(b), "Accept-Encoding": "identity"} for b in self.backends}
        self._parser = ThreadPoolExecutor(max_workers=1, thread_name_prefix="specgate-scrape-parse")
        self.loop_lag = LoopLag()  # runs beside the health checks (`run_health`)

    # --- selection
    def by_role(self, role: str) -> list[Backend]:
        return [b for b in self.backends if b.role == role]

    def available_roles(self, now: float, exclude: frozenset[Backend] = frozenset()) -> frozenset[str]:
        return frozenset(b.role for b in self.backends if b not in exclude and b.routable(now))

    def by_name(self, name: str, now: float) -> Backend | None:
        """The backend called `name` if it is routable."""
        b = self._by_name.get(name)
        return b if b is not None and b.routable(now) else None

    def pick(self, role: str, now: float, exclude: frozenset[Backend] = frozenset()) -> Backend | None:
        """The least-loaded routable backend of a role."""
        best: Backend | None = None
        best_load = 0.0
        for b in self.backends:
            if b.role == role and b not in exclude and b.routable(now):
                load = self.load(b, now)
                if best is None or load < best_load:
                    best, best_load = b, load
        return best

    def load(self, b: Backend, now: float) -> float:
        """Requests running + waiting on `b` (see the module docstring)."""
        if b.scraped_load is None or now - b.scraped_at > self._load_stale_s:
            return float(b.inflight)
        since = (b.dispatched - b.dispatched_at_scrape) - (b.completed - b.completed_at_scrape)
        return max(b.scraped_load + since, float(b.inflight))

    def _accrue(self, b: Backend, now: float) -> None:
        b.load_area += b.area_load * max(now - b.area_t, 0.0)
        b.area_t, b.area_load = now, self.load(b, now)

    def area(self, b: Backend, now: float) -> float:
        """∫ load dt up to now: the mean load over an interval is the difference over its length."""
        return b.load_area + b.area_load * max(now - b.area_t, 0.0)

    def group_areas(self, b: Backend, now: float) -> tuple[float, tuple[float, ...]]:
        """`area` of `b` and of its co-runners (in `co_runners` order)."""
        return self.area(b, now), tuple(self.area(o, now) for o in self.co_members[b.name])

    def co_runners(self, b: Backend, now: float) -> tuple[tuple[Role, float], ...]:
        """The other backends on `b`'s GPU, with their loads."""
        return tuple((o.role, self.load(o, now)) for o in self.co_members[b.name])

    def gpu_prompts(self, b: Backend, own: tuple[int, int] | None = None) -> tuple[int, int]:
        """Prompt tokens to prefill, and prompts, this process has sent to `b`'s GPU (`b` and its co-runners), ever
        (`b`'s own counted as `own` where given): the difference over a stream's decode is the prefill work that
        ran inside its steps."""
        tokens, prompts = own if own is not None else self.sent_so_far(b)
        for o in self.co_members[b.name]:
            tokens += o.prefill_tokens_sent
            prompts += o.prompts_sent
        return tokens, prompts

    @staticmethod
    def sent_so_far(b: Backend) -> tuple[int, int]:
        """`b`'s own part of `gpu_prompts` now. Taken when a request is sent: the prompts sent to its server after it
        wait behind it (vLLM admits FIFO) and are prefilled after its first token, inside its decode (on
        azure-code-b's 1 + 1 fleet a burst's requests waited 0.3-0.7 s for their first token, and the prompts sent
        meanwhile were most of their decode time)."""
        return b.prefill_tokens_sent, b.prompts_sent

    def shared_groups(self) -> list[str]:
        """GPU groups with a baseline and a speculative server (a pair time-sharing one GPU)."""
        return [g for g, members in self.groups.items() if len({m.role for m in members}) > 1]

    def auth_headers(self, b: Backend) -> dict[str, str]:
        """The upstream key, else the credentials of the backend's URL."""
        key = self.settings.upstream_api_key
        if key is not None:
            return {"Authorization": "Bearer " + key.get_secret_value()}
        return {"Authorization": b.auth} if b.auth else {}

    def warming_up(self, b: Backend) -> bool:
        return b.sent_since_up <= self.settings.warmup_requests

    def ready(self) -> bool:
        now = time.monotonic()
        return any(b.routable(now) for b in self.backends)

    # --- request accounting
    def acquire(self, b: Backend, prompt_tokens: int = 0, cached_tokens: int = 0) -> None:
        """A request was sent to `b` with `prompt_tokens`, of which `b` likely holds `cached_tokens` (its prefix
        index): only the rest joins its prefill queue (`sent`)."""
        b.inflight += 1
        b.prompt_tokens_sent += prompt_tokens
        b.prefill_tokens_sent += max(prompt_tokens - cached_tokens, 0)
        if prompt_tokens:
            b.prompts_sent += 1
        b.dispatched += 1
        b.sent_since_up += 1
        now = time.monotonic()
        b.sent.append((now, max(prompt_tokens - cached_tokens, 0)))
        self._accrue(b, now)
        self._gauges[b.name][0].set(b.inflight)

    def release(self, b: Backend) -> None:
        b.inflight -= 1
        b.completed += 1
        if b.sent:  # the oldest is the first prefilled: what is left in flight is what may still queue
            b.sent.popleft()
        self._accrue(b, time.monotonic())
        self._gauges[b.name][0].set(b.inflight)

    def record_success(self, b: Backend) -> None:
        b.consecutive_failures = 0

    def record_failure(self, b: Backend, reason: str) -> None:
        self.metrics.upstream_errors.labels(b.name, b.role, reason).inc()
        b.consecutive_failures += 1
        if b.consecutive_failures >= self.settings.eject_consecutive_failures:
            self.eject(b, f"{b.consecutive_failures} consecutive failures")

    def eject(self, b: Backend, why: str) -> None:
        now = time.monotonic()
        if now < b.ejected_until:
            return
        cooldown = min(self.settings.eject_base_cooldown_s * 2 ** b.ejections, self.settings.eject_max_cooldown_s)
        b.ejections += 1
        b.ejected_until = now + cooldown
        b.healthy = False  # must pass a health check to come back
        b.consecutive_failures = 0
        self.metrics.ejections.labels(b.name, b.role).inc()
        self._gauges[b.name][1].set(0)
        log_event(log, logging.WARNING, "eject", backend=b.name, why=why, cooldown_s=round(cooldown, 1))

    # --- background loops
    async def check_health(self, session: aiohttp.ClientSession, b: Backend) -> None:
        answer = await self._probe_health(session, b)
        b.stalled_checks = b.stalled_checks + 1 if answer == "stalled" else 0
        if answer == "stalled":  # the gateway's stall, not the backend's failure: its state stays as it was ...
            another = any(o is not b and o.healthy and o.stalled_checks == 0 for o in self.backends)
            if stall_still_excuses(b.stalled_checks, another):
                return
            log_event(log, logging.WARNING, "stall_not_excused", backend=b.name, checks=b.stalled_checks,
                      why="its health checks timed out in every loop stall while another backend answered")
            answer = "failed"  # ... unless it goes on while others answer through the same loop
        ok = not isinstance(answer, str) and answer[0] == 200
        now = time.monotonic()
        if ok:
            if not b.healthy and now >= b.ejected_until:
                log_event(log, logging.INFO, "backend_up", backend=b.name)
                b.sent_since_up = 0  # a restarted server compiles new shapes again
            b.healthy = now >= b.ejected_until
        elif now >= b.ejected_until:  # a failed check ejects, with the growing cooldown
            log_event(log, logging.WARNING, "backend_down", backend=b.name)
            self.eject(b, "health check failed")
        else:
            b.healthy = False
        self._gauges[b.name][1].set(1 if b.routable(now) else 0)

    async def _probe_health(self, session: aiohttp.ClientSession,
                            b: Backend) -> tuple[int, bytes] | Literal["failed", "stalled"]:
        """GET /health. A timeout counts only if the loop ran for most of it (`LoopLag.excuses`); one it lagged
        through is tried again, up to HEALTH_TRIES, then "stalled". A scrape needs no such care: a failed one only
        leaves the load to this process's own count."""
        for _ in range(HEALTH_TRIES):
            started, lag_before = time.monotonic(), self.loop_lag.reading()
            answer = await self._get(session, b, "/health")
            if answer != "timeout":
                return answer
            if not self.loop_lag.excuses("health check", b.name, SCRAPE_TIMEOUT_S, started, lag_before):
                return "failed"
        return "stalled"

    def excuse_stall(self, failure: Exception, b: Backend, started: float, lag_before: float, timeout_s: float) -> None:
        """A completion attempt (begun at `started`, the loop's lag then `lag_before`) that failed: a timeout the loop's
        own stall explains blames nobody (the request is tried elsewhere, `b`'s failure count stays). `timeout_s`
        is the attempt's deadline; a connect failure's is the connect timeout."""
        if isinstance(failure, UpstreamFailure) and failure.timed_out:
            if failure.reason == "connect":
                timeout_s = min(timeout_s, self.settings.connect_timeout_s)
            if self.loop_lag.excuses("request", b.name, timeout_s, started, lag_before):
                failure.suspect, failure.blameless = False, True

    async def _get_metrics(self, session: aiohttp.ClientSession, b: Backend) -> bytes | None:
        answer = await self._get(session, b, "/metrics")
        return answer[1] if not isinstance(answer, str) and answer[0] == 200 else None

    async def _get(self, session: aiohttp.ClientSession, b: Backend, path: str) -> _Answer:
        """GET `path` on `b` (the session bounds the whole exchange); the status and at most `max_scrape_bytes` of
        body, or "timeout" (the session's deadline passed), or "failed"."""
        try:
            async with session.get(b.url.rstrip("/") + path, headers=self._probe_headers[b.name],
                                   allow_redirects=False) as r:
                return r.status, await read_capped(r, self.settings.max_scrape_bytes)
        except TimeoutError:  # before CLIENT_ERRORS: aiohttp's timeouts are ClientErrors too
            return "timeout"
        except (*CLIENT_ERRORS, ResponseTooLarge, ValueError):
            return "failed"

    async def scrape_load(self, session: aiohttp.ClientSession, b: Backend) -> bytes | None:
        """Read running + waiting; return the scrape's text for a full parse."""
        sent_at, dispatched, completed, tokens = time.monotonic(), b.dispatched, b.completed, b.prompt_tokens_sent
        text = await self._get_metrics(session, b)
        load = None if text is None else await self._off_loop(text, parse_load, text)
        if load is not None:
            b.scraped_load, b.scraped_at = load, sent_at
            b.dispatched_at_scrape, b.completed_at_scrape = dispatched, completed
            b.prompt_tokens_at_scrape = tokens
            self._accrue(b, time.monotonic())
        self.metrics.routing_load.labels(b.name, b.role).set(self.load(b, time.monotonic()))
        return text

    async def scrape(self, session: aiohttp.ClientSession, b: Backend, text: bytes | None = None) -> None:
        """Full parse of a scrape (`text`, the last load scrape's, or a new one): gauges and the
        speculative-decoding counters."""
        tokens = b.prompt_tokens_at_scrape if text is not None else b.prompt_tokens_sent
        if text is None:
            text = await self._get_metrics(session, b)
            if text is None:
                return
        try:
            snap = await self._off_loop(text, parse_vllm_metrics, text.decode("utf-8", "replace"))
        except ValueError as exc:  # not a vLLM scrape, or a value no server reports: the last good state stays
            log_event(log, logging.WARNING, "bad_metrics", backend=b.name, why=str(exc)[:200])
            return
        delta = spec_delta(b.snapshot, snap)
        b.snapshot, b.snapshot_prompt_tokens = snap, tokens
        m = self.metrics
        m.running.labels(b.name, b.role).set(snap.running)
        m.waiting.labels(b.name, b.role).set(snap.waiting)
        m.kv_cache.labels(b.name, b.role).set(snap.kv_cache_usage)
        if delta is not None and delta.drafts > 0:
            b.last_spec = delta
            m.acceptance_rate.labels(b.name, b.role).set(delta.acceptance_rate)
            m.acceptance_length.labels(b.name, b.role).set(delta.mean_acceptance_length)
            if self.on_spec_delta is not None:
                self.on_spec_delta(b, delta)

    async def _off_loop(self, text: bytes, parse: Callable[[_In], _Out], arg: _In) -> _Out:
        """`parse(arg)`: inline for a page of a usual size, else in the pool's parsing thread (one at a time, so
        large pages from many backends queue there, not on the event loop)."""
        if len(text) <= INLINE_PARSE_BYTES:
            return parse(arg)
        return await asyncio.get_running_loop().run_in_executor(self._parser, parse, arg)

    async def run_health(self, session: aiohttp.ClientSession) -> None:
        """One loop per backend: a backend that hangs delays only its own checks. The loop's lag monitor beside them."""
        await asyncio.gather(self.loop_lag.run(), *(self._health_loop(session, b) for b in self.backends))

    async def _health_loop(self, session: aiohttp.ClientSession, b: Backend) -> None:
        while True:
            try:
                await self.check_health(session, b)
            except Exception as exc:  # a fault of ours must not end this backend's checks for good
                log_event(log, logging.ERROR, "health_check_failed", backend=b.name, why=repr(exc)[:300])
            await asyncio.sleep(self.settings.health_interval_s)

    async def run_scrape(self, session: aiohttp.ClientSession) -> None:
        """One loop per backend: load every `load_scrape_interval_s`; every `scrape_interval_s`, the same text
        parsed in full. A backend that hangs makes only its own load stale."""
        await asyncio.gather(*(self._scrape_loop(session, b) for b in self.backends))

    async def _scrape_loop(self, session: aiohttp.ClientSession, b: Backend) -> None:
        s = self.settings
        every = max(round(s.scrape_interval_s / s.load_scrape_interval_s), 1)
        tick = 0
        while True:
            try:
                text = await self.scrape_load(session, b)
                if tick % every == 0 and text is not None:
                    await self.scrape(session, b, text)
            except Exception as exc:  # a fault of ours must not end this backend's scrapes for good
                log_event(log, logging.ERROR, "scrape_failed", backend=b.name, why=repr(exc)[:300])
            tick += 1
            await asyncio.sleep(s.load_scrape_interval_s)

    def close(self) -> None:
        self._parser.shutdown(wait=False, cancel_futures=True)
