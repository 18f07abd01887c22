"""The backend pool: exact in-flight counts, health, outlier ejection and scraped vLLM load.

State changes come from the request path (`acquire`/`release`, `record_success`/`record_failure`) and
from two background loops (health polling and `/metrics` scraping) that run in the app's cleanup context.
Ejection: `eject_consecutive_failures` failures in a row, or a failed health check, take a backend out
of rotation for a cooldown that doubles on each repeat (capped); it returns only after a passing check.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import aiohttp

from gateway.metrics import Metrics
from gateway.settings import Settings
from gateway.vllm_metrics import SpecDelta, VllmSnapshot, parse_vllm_metrics, spec_delta

log = logging.getLogger("specgate.backends")


@dataclass(slots=True, eq=False)
class Backend:
    name: str
    role: str
    url: str
    inflight: int = 0
    healthy: bool = True  # optimistic until the first health check says otherwise
    ejected_until: float = 0.0
    ejections: int = 0
    consecutive_failures: int = 0
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
        self.backends: list[Backend] = []
        for role, urls in (("baseline", settings.baseline_urls), ("speculative", settings.speculative_urls)):
            for i, url in enumerate(urls):
                backend = Backend(name=f"{role}-{i}", role=role, url=url)
                self.backends.append(backend)
                metrics.register_backend(backend.name, role)
        self._gauges = {
            b.name: (metrics.inflight.labels(b.name, b.role), metrics.up.labels(b.name, b.role))
            for b in self.backends
        }
        for b in self.backends:
            self._gauges[b.name][1].set(1)

    # --- selection
    def by_role(self, role: str) -> list[Backend]:
        return [b for b in self.backends if b.role == role]

    def available_roles(self, now: float, exclude: frozenset[Backend] = frozenset()) -> frozenset[str]:
        return frozenset(b.role for b in self.backends if b not in exclude and b.routable(now))

    def pick(self, role: str, now: float, exclude: frozenset[Backend] = frozenset()) -> Backend | None:
        """The least-loaded routable backend of a role."""
        best: Backend | None = None
        for b in self.backends:
            if b.role == role and b not in exclude and b.routable(now) and (best is None or b.inflight < best.inflight):
                best = b
        return best

    def role_inflight(self, role: str) -> int:
        return min((b.inflight for b in self.backends if b.role == role), default=0)

    def ready(self) -> bool:
        now = time.monotonic()
        return any(b.routable(now) for b in self.backends)

    # --- request accounting
    def acquire(self, b: Backend) -> None:
        b.inflight += 1
        self._gauges[b.name][0].set(b.inflight)

    def release(self, b: Backend) -> None:
        b.inflight -= 1
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
        log.warning('{"event": "eject", "backend": "%s", "why": "%s", "cooldown_s": %.1f}', b.name, why, cooldown)

    # --- background loops
    async def check_health(self, session: aiohttp.ClientSession, b: Backend) -> None:
        ok = False
        with contextlib.suppress(TimeoutError, aiohttp.ClientError, OSError):
            async with session.get(b.url + "/health", timeout=aiohttp.ClientTimeout(total=2.0)) as r:
                ok = r.status == 200
        now = time.monotonic()
        if ok:
            if not b.healthy and now >= b.ejected_until:
                log.info('{"event": "backend_up", "backend": "%s"}', b.name)
            b.healthy = now >= b.ejected_until
        elif now >= b.ejected_until:  # a failed check ejects, with the growing cooldown
            log.warning('{"event": "backend_down", "backend": "%s"}', b.name)
            self.eject(b, "health check failed")
        else:
            b.healthy = False
        self._gauges[b.name][1].set(1 if b.routable(now) else 0)

    async def scrape(self, session: aiohttp.ClientSession, b: Backend) -> None:
        try:
            async with session.get(b.url + "/metrics", timeout=aiohttp.ClientTimeout(total=2.0)) as r:
                if r.status != 200:
                    return
                text = await r.text()
        except (TimeoutError, aiohttp.ClientError, OSError):
            return
        try:
            snap = parse_vllm_metrics(text)
        except ValueError:
            log.warning('{"event": "bad_metrics", "backend": "%s"}', b.name)
            return
        delta = spec_delta(b.snapshot, snap)
        b.snapshot = snap
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

    async def run_health(self, session: aiohttp.ClientSession) -> None:
        while True:
            await asyncio.gather(*(self.check_health(session, b) for b in self.backends))
            await asyncio.sleep(self.settings.health_interval_s)

    async def run_scrape(self, session: aiohttp.ClientSession) -> None:
        while True:
            await asyncio.gather(*(self.scrape(session, b) for b in self.backends))
            await asyncio.sleep(self.settings.scrape_interval_s)
