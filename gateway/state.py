"""The objects one gateway app owns, under one typed app key (no globals, many apps per process)."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import ClassVar

from aiohttp import web
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector

from gateway.backends import BackendPool
from gateway.core.acceptance_cells import acceptance_rate
from gateway.core.classify import CLASSES, TEMPERATURE_BUCKETS
from gateway.core.costmodel import CoRunner, step_s
from gateway.core.learner import Learner
from gateway.metrics import Metrics
from gateway.proxy import Proxy
from gateway.router import Router
from gateway.settings import Settings


@dataclass(eq=False)
class AppState:
    key: ClassVar[web.AppKey[AppState]]
    settings: Settings
    metrics: Metrics
    pool: BackendPool
    learner: Learner
    router: Router
    proxy: Proxy
    client_keys: list[bytes]
    admin_keys: list[bytes]
    draining: bool = False
    measuring_steps: bool = False  # start-up: the shared GPUs' quiet steps are being measured (not ready yet)
    active_requests: int = 0  # requests being handled, probes excepted (the drain waits for them)
    multiprocess_dir: str | None = field(default_factory=lambda: os.environ.get("PROMETHEUS_MULTIPROC_DIR"))

    def render_metrics(self) -> bytes:
        self.metrics.flush()
        if self.multiprocess_dir:
            registry = CollectorRegistry()
            MultiProcessCollector(registry, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]
            return generate_latest(registry)
        return generate_latest(self.metrics.registry)

    def export_learned(self) -> None:
        """Copy the learner's estimates into gauges (called periodically, off the request path)."""
        m, lrn = self.metrics, self.learner
        gamma = lrn.config.num_speculative_tokens
        for cls in CLASSES:
            for bucket in TEMPERATURE_BUCKETS:
                tps = lrn.tokens_per_step(cls, bucket)
                m.learned_tps.labels(cls, bucket).set(tps)
                m.learned_acceptance.labels(cls, bucket).set(acceptance_rate(tps, gamma))
                m.learned_output.labels(cls, bucket).set(lrn.output_tokens(cls, bucket, 1 << 30))
        now = time.monotonic()
        for b in self.pool.backends:
            co = [CoRunner(lrn.step_model(role), load, lrn.interference(role))
                  for role, load in self.pool.co_runners(b, now)]
            m.learned_step.labels(b.role).set(step_s(lrn.step_model(b.role), self.pool.load(b, now) + 1, co,
                                                     lrn.interference(b.role)))


AppState.key = web.AppKey("specgate_state", AppState)
