"""`specgate bench` orchestration: per policy, a fresh emulated pair (in-process) and a fresh gateway
(subprocess), the workload replayed through it, and the measurements turned into the results file."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import platform
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.bench.fleet.balancer import gateway_fleet
from gateway.bench.fleet.record import rolling_restart, true_load_trace
from gateway.bench.kit.procs import fetch_text
from gateway.bench.replay.client import Measured, replay
from gateway.bench.replay.oracle import write_oracle
from gateway.bench.replay.summary import group_summaries, prediction_errors, summarize
from gateway.core.classify import temperature_bucket
from gateway.workloads.items import WorkloadItem

POLICIES = ("baseline", "speculative", "rules", "adaptive", "clairvoyant", "round_robin", "least_loaded", "hindsight")
MODEL_NAME = "specgate-emu"


def default_profile() -> str:
    from gateway.emulator import profiles

    return str(getattr(profiles, "DEFAULT_PROFILE", "h200-ngram"))


@dataclass(slots=True)
class BenchConfig:
    workload_name: str
    policies: Sequence[str]
    profile: str
    time_scale: float = 1.0
    repeat: int = 1
    work_dir: Path = Path(".")
    gateway_env: dict[str, str] = field(default_factory=dict)
    timeout_s: float = 600.0
    fleet: list[str] | None = None  # one entry per simulated GPU (pair | baseline | speculative); None: one pair
    seed: int | None = 1  # SPECGATE_RANDOM_SEED of the gateway's exploration draws (+ repeat index)
    hindsight_map: dict[str, str] = field(default_factory=dict)  # class/bucket -> role, for `hindsight`
    gateways: int = 1  # gateway processes; more than one run behind haproxy (gateway/bench/fleet/balancer.py)
    balance: str = "leastconn"
    rolling_restart: bool = False  # restart each gateway in turn while the workload runs
    warm: str = "none"  # what a restarted gateway starts from: none | file | peers
    peer_args: dict[str, list[str]] = field(default_factory=dict)  # router -> extra flags (`bench --peer-arg`)


def scaled_priors(time_scale: float) -> dict[str, str]:
    """The gateway's timing priors are wall seconds on real hardware; an emulator running at `time_scale`
    makes every step `time_scale` times shorter, so the bench scales the priors the same way (the gateway
    still learns the rest online). Returned as SPECGATE_* environment variables."""
    if time_scale == 1.0:
        return {}
    from gateway.settings import Settings

    env = {}
    for name, info in Settings.model_fields.items():
        if name.startswith("prior_") and ("_s_" in name or name.endswith("_s")) and isinstance(info.default, float):
            env[f"SPECGATE_{name.upper()}"] = repr(info.default * time_scale)
    return env


def _record(m: Measured, time_scale: float, inflight: int, repeat: int) -> dict[str, Any]:
    def sim(value: float | None) -> float | None:
        return None if value is None else round(value / time_scale, 6)

    rec: dict[str, Any] = {
        "id": m.id, "kind": m.kind, "backend": m.backend, "class": m.cls, "reason": m.reason,
        "ttft_s": sim(m.ttft_s), "e2e_s": sim(m.e2e_s), "completion_tokens": m.completion_tokens,
        "engine_steps": m.engine_steps, "status": m.status, "sent_s": sim(m.sent_at_s),
        "lateness_s": sim(m.lateness_s), "inflight_at_send": inflight,
    }
    if repeat:
        rec["repeat"] = repeat
    if m.error:
        rec["error"] = m.error
    return rec


def _stats(server: Any) -> dict[str, Any]:
    stats = getattr(server, "stats", None)
    if stats is None or not dataclasses.is_dataclass(stats):
        return {}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(stats):
        value = getattr(stats, f.name)
        if isinstance(value, int | float | str):
            out[f.name] = value
        elif f.name == "aborted":
            out[f.name] = len(value)
    out["mean_acceptance_length"] = round(float(getattr(stats, "mean_acceptance_length", 1.0)), 3)
    return out


def _read_log(path: Path) -> list[dict[str, Any]]:
    lines = []
    for raw in path.read_text(errors="replace").splitlines():
        if raw.startswith("{"):
            try:
                lines.append(json.loads(raw))
            except json.JSONDecodeError:
                continue
    return lines


async def run_policy(
    items: Sequence[WorkloadItem], policy: str, config: BenchConfig, on_done: Callable[[], None], repeat: int = 0
) -> dict[str, Any]:
    """Run one bench entry: a policy name, or `policy@layout` for a fleet other than the bench's
    (`least_loaded@2xbaseline`, layout entries joined by `+`)."""
    policy, _, layout = policy.partition("@")
    if layout:
        from gateway.emulator import parse_layout

        config = dataclasses.replace(config, fleet=parse_layout(layout.replace("+", ",")))
    tag = (f"{policy}-{layout}" if layout else policy) + (f"-{repeat}" if repeat else "")
    env = {**scaled_priors(config.time_scale), **config.gateway_env, "SPECGATE_POLICY": policy}
    if config.seed is not None:
        env.setdefault("SPECGATE_RANDOM_SEED", str(config.seed + max(repeat - 1, 0)))
    if policy == "hindsight" and config.hindsight_map:  # else a map given with --gateway-env (from earlier statics)
        env["SPECGATE_HINDSIGHT_MAP"] = ",".join(f"{k}={v}" for k, v in sorted(config.hindsight_map.items()))
    if policy == "clairvoyant":
        env["SPECGATE_ORACLE_FILE"] = str(write_oracle(items, config.profile, config.work_dir / "oracle.json"))
    inflight = InFlight(on_done)
    async with _emulated(config, items) as (servers, backends_env):
        env.update(backends_env)
        async with gateway_fleet(env, config.work_dir, tag, config.gateways, config.balance,
                                 config.warm) as gateways:
            url = gateways.url
            started = time.perf_counter()
            span = (items[-1].t - items[0].t) * config.time_scale if items else 0.0
            async with true_load_trace(_engines(servers), started, config.time_scale) as true_load, \
                    rolling_restart(gateways, span, started, config.time_scale, config.rolling_restart) as restarts:
                measured = await replay(items, url, MODEL_NAME, config.time_scale, on_done=inflight.done,
                                        timeout_s=config.timeout_s, on_send=inflight.sent)
            wall = time.perf_counter() - started
            metrics_text = "".join([await fetch_text(r.url + "/metrics") for r in gateways.replicas])
            try:
                admin_state = json.loads(await fetch_text(gateways.replicas[0].url + "/admin/state"))
            except Exception:  # the admin endpoint is optional for a bench; its absence is not an error
                admin_state = None
        emulator = _emulator_stats(servers)
    (config.work_dir / f"gateway-{tag}.metrics.txt").write_text(metrics_text)
    buckets = {i.id: temperature_bucket(_temperature(i)) for i in items}
    records = [_record(m, config.time_scale, inflight.at_send.get(m.id, 0), repeat) | {"bucket": buckets.get(m.id)}
               for m in measured]
    log = [line for path in gateways.log_paths() for line in _read_log(path)]
    return {"records": records, "wall_s": round(wall, 2), "emulator": emulator, "log": log,
            "admin_state": admin_state, "true_load": true_load, "restarts": restarts}


@contextlib.asynccontextmanager
async def _emulated(config: BenchConfig, items: Sequence[WorkloadItem]) -> AsyncIterator[tuple[Any, dict[str, str]]]:
    """The emulated servers for one run, told the items' references and acceptance, and the gateway settings that
    name them."""
    from gateway.emulator import EmulatedFleet, EmulatedPair

    servers: Any
    if config.fleet is None:
        servers = EmulatedPair(profile=config.profile, host="127.0.0.1", baseline_port=0, speculative_port=0,
                               time_scale=config.time_scale, model_name=MODEL_NAME)
    else:
        servers = EmulatedFleet(config.fleet, profile=config.profile, time_scale=config.time_scale,
                                model_name=MODEL_NAME)
    async with servers:
        servers.register_references({i.id: i.reference for i in items if i.reference is not None})
        servers.register_acceptance({i.id: i.tokens_per_step for i in items if i.tokens_per_step is not None})
        if config.fleet is None:
            yield servers, {"SPECGATE_BASELINE_URLS": servers.baseline_url,
                            "SPECGATE_SPECULATIVE_URLS": servers.speculative_url}
        else:
            yield servers, {"SPECGATE_BACKENDS": servers.backends_setting()}


@dataclass
class InFlight:
    """The replay's requests in flight, and how many were when each was sent (a record's `inflight_at_send`)."""

    on_done: Callable[[], None]
    now: int = 0
    at_send: dict[str, int] = field(default_factory=dict)

    def sent(self, item_id: str) -> None:
        self.at_send[item_id] = self.now
        self.now += 1

    def done(self, _m: Measured) -> None:
        self.now -= 1
        self.on_done()


def _emulator_stats(servers: Any) -> dict[str, Any]:
    if hasattr(servers, "servers"):
        counts: dict[str, int] = {}
        out = {}
        for s in servers.servers:
            name = f"{s.role}-{counts.get(s.role, 0)}"
            counts[s.role] = counts.get(s.role, 0) + 1
            out[name] = _stats(s.server) | {"group": s.group} | _prefix_cache(s.server)
        return out
    return {"baseline": _stats(servers.baseline), "speculative": _stats(servers.speculative)}


def _prefix_cache(server: Any) -> dict[str, float]:
    """The server's `vllm:prefix_cache_hits` and `vllm:prefix_cache_queries` (tokens), as its /metrics says."""
    m = server.engine.metrics
    return {"prefix_cache_hits": m.prefix_hits._value.get(), "prefix_cache_queries": m.prefix_queries._value.get()}


def _engines(servers: Any) -> list[Any]:
    """The emulated engines of a pair or a fleet, in backend order."""
    if hasattr(servers, "servers"):
        return [s.server.engine for s in servers.servers]
    return [servers.baseline.engine, servers.speculative.engine]


def _temperature(item: WorkloadItem) -> float:
    value = item.body.get("temperature", 1.0)
    return float(value) if isinstance(value, int | float) else 1.0


def hindsight_map(runs: dict[str, list[dict[str, Any]]]) -> dict[str, str]:
    """The best fixed map (class, temperature bucket) -> role, from runs in which every request went to one
    role: per key, the role whose requests finished sooner on average."""
    means: dict[str, dict[str, float]] = {}
    for records in runs.values():
        roles = {r["backend"] for r in records if r.get("status") == "200"}
        if len(roles) != 1:
            continue
        (role,) = roles
        by_key: dict[str, list[float]] = {}
        for r in records:
            if r.get("e2e_s") is not None:
                by_key.setdefault(f"{r['class']}/{r['bucket']}", []).append(r["e2e_s"])
        for key, values in by_key.items():
            means.setdefault(key, {})[role] = sum(values) / len(values)
    return {key: min(roles, key=lambda k: roles[k]) for key, roles in means.items() if len(roles) == 2}


def policy_result(runs: Sequence[dict[str, Any]], time_scale: float) -> dict[str, Any]:
    records = [r for run in runs for r in run["records"]]
    log = [line for run in runs for line in run["log"]]
    return {
        "summary": summarize(records),
        "by_class": group_summaries(records, lambda r: r.get("class")),
        "by_kind": group_summaries(records, lambda r: r.get("kind")),
        "prediction": prediction_errors(log, time_scale),
        "wall_s": [run["wall_s"] for run in runs],
        "emulator": [run["emulator"] for run in runs],
        "learned": runs[-1].get("admin_state"),
        "runs": [_run_summary(run["records"]) for run in runs],
        "restarts": [run.get("restarts", []) for run in runs],
        "true_load": [run.get("true_load", []) for run in runs],
        "requests": records,
    }


def _run_summary(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One repeat (one exploration seed): its mean and where it sent requests, so a bistable policy shows up
    as spread between repeats instead of luck."""
    done = [r["e2e_s"] for r in records if r.get("e2e_s") is not None]
    to_spec = sum(1 for r in records if r.get("backend") == "speculative")
    return {"mean_e2e_s": round(sum(done) / len(done), 4) if done else None,
            "speculative_share": round(to_spec / len(records), 3) if records else None}


def workload_info(name: str, items: Sequence[WorkloadItem]) -> dict[str, Any]:
    span = items[-1].t - items[0].t if len(items) > 1 else 0.0
    kinds: dict[str, int] = {}
    for item in items:
        kinds[item.kind or "unknown"] = kinds.get(item.kind or "unknown", 0) + 1
    return {"name": name, "requests": len(items), "duration_s": round(span, 3),
            "mean_rate_per_s": round(len(items) / span, 3) if span else None, "kinds": dict(sorted(kinds.items()))}


def results_document(config: BenchConfig, items: Sequence[WorkloadItem], policies: dict[str, Any],
                     command: Sequence[str]) -> dict[str, Any]:
    return {
        "profile": config.profile,
        "fleet": config.fleet or ["pair"],
        "workload": config.workload_name,
        "workload_info": workload_info(config.workload_name, items),
        "time_scale": config.time_scale,
        "repeat": config.repeat,
        "gateways": config.gateways,
        "balance": config.balance if config.gateways > 1 else None,
        "rolling_restart": config.rolling_restart,
        "warm": config.warm,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()},
        "command": " ".join(command),
        "units": "simulated seconds (wall seconds / time_scale)",
        "policies": policies,
    }
