"""One bench entry for a peer router: a fresh emulated fleet (or pair), the router started in front of all its
servers, the workload replayed through it exactly as through specgate, and the same records.

The router adds no `x-specgate-*` headers, so each request's server is read from the emulator's own records
(by `x-request-id`, which both routers forward): a record's `backend` is the role of the server that
answered, `instance` that server (`speculative-1`), and `class` the workload's intended class (the
gateway's classifier did not see the request). `request_ids_seen` is the share of the workload's ids the
emulated servers received: 1.0 when the router forwards `x-request-id` (the emulator keys a request's
reference text and synthetic acceptance on it).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from gateway.bench.fleet.record import true_load_trace
from gateway.bench.peers.process import PeerStartError, peer_router
from gateway.bench.peers.spec import PeerSpec, parse_peer
from gateway.bench.replay.client import replay
from gateway.bench.replay.run import (
    MODEL_NAME,
    BenchConfig,
    InFlight,
    _emulated,
    _emulator_stats,
    _engines,
    _record,
    _temperature,
)
from gateway.core.classify import temperature_bucket
from gateway.workloads.items import WorkloadItem
from gateway.workloads.task import KIND_CLASS


def _servers(servers: Any) -> list[tuple[str, str, Any]]:
    """(role, instance name, emulated server) of a pair or a fleet, in backend order."""
    if hasattr(servers, "servers"):
        counts: dict[str, int] = {}
        out = []
        for s in servers.servers:
            out.append((s.role, f"{s.role}-{counts.get(s.role, 0)}", s.server))
            counts[s.role] = counts.get(s.role, 0) + 1
        return out
    return [("baseline", "baseline-0", servers.baseline), ("speculative", "speculative-0", servers.speculative)]


def _urls(servers: Any) -> list[str]:
    if hasattr(servers, "servers"):
        return [s.url for s in servers.servers]
    return [servers.baseline_url, servers.speculative_url]


def _who_served(servers: Any) -> dict[str, tuple[str, str]]:
    """Request id -> (role, instance), from the emulated servers' finished records."""
    out: dict[str, tuple[str, str]] = {}
    for role, name, server in _servers(servers):
        for rec in server.stats.records:
            out[rec.request_id] = (role, name)
    return out


def _failed(items: Sequence[WorkloadItem], spec: PeerSpec, error: str, repeat: int) -> dict[str, Any]:
    """A peer that did not start: every request an error that says why, so the table shows it."""
    records = [{"id": i.id, "kind": i.kind, "backend": None, "class": KIND_CLASS.get(i.kind or ""), "reason": None,
                "ttft_s": None, "e2e_s": None, "completion_tokens": None, "engine_steps": 0, "status": "peer_failed",
                "sent_s": None, "lateness_s": None, "inflight_at_send": 0, "error": error[:300]}
               | ({"repeat": repeat} if repeat else {}) for i in items]
    return {"records": records, "wall_s": 0.0, "emulator": {}, "log": [], "admin_state": None, "true_load": [],
            "restarts": [], "peer": {"name": spec.name, "router": spec.router, "policy": spec.policy,
                                     "started": False, "error": error}}


async def run_peer(items: Sequence[WorkloadItem], name: str, config: BenchConfig, on_done: Callable[[], None],
                   repeat: int = 0) -> dict[str, Any]:
    spec = parse_peer(name)
    if spec.layout:
        from gateway.emulator import parse_layout

        config = dataclasses.replace(config, fleet=parse_layout(spec.layout.replace("+", ",")))
    tag = spec.name.replace(":", "-").replace("@", "-") + (f"-{repeat}" if repeat else "")
    log_path = config.work_dir / f"peer-{tag}.log"
    inflight = InFlight(on_done)
    async with _emulated(config, items) as (servers, _env):
        try:
            async with peer_router(spec, _urls(servers), log_path, config.peer_args.get(spec.router, ())) as url:
                started = time.perf_counter()
                async with true_load_trace(_engines(servers), started, config.time_scale) as true_load:
                    measured = await replay(items, url, MODEL_NAME, config.time_scale, on_done=inflight.done,
                                            timeout_s=config.timeout_s, on_send=inflight.sent)
                wall = time.perf_counter() - started
        except PeerStartError as exc:
            return _failed(items, spec, f"{spec.name} did not start: {exc}", repeat)
        served = _who_served(servers)
        emulator = _emulator_stats(servers)
    by_id = {i.id: i for i in items}
    records = []
    for m in measured:
        role, instance = served.get(m.id, (None, None))
        m.backend, m.cls = role, KIND_CLASS.get(m.kind or "")
        m.reason = f"{spec.name} -> {instance}" if instance else None
        rec = _record(m, config.time_scale, inflight.at_send.get(m.id, 0), repeat)
        records.append(rec | {"instance": instance, "bucket": temperature_bucket(_temperature(by_id[m.id]))})
    seen = sum(1 for i in items if i.id in served) / len(items) if items else 1.0
    return {"records": records, "wall_s": round(wall, 2), "emulator": emulator, "log": [], "admin_state": None,
            "true_load": true_load, "restarts": [],
            "peer": {"name": spec.name, "router": spec.router, "policy": spec.policy, "started": True,
                     "request_ids_seen": round(seen, 4), "log": str(log_path)}}
