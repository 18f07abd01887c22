"""`specgate bench` orchestration: per policy, a fresh emulated pair (in-process) and a fresh gateway
(subprocess), the workload replayed through it, and the measurements turned into the results file."""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gateway.bench.balancer import gateway_fleet
from gateway.bench.client import Measured, replay
from gateway.bench.fleet_run import rolling_restart, true_load_trace
from gateway.bench.oracle import write_oracle
from gateway.bench.procs import fetch_text
from gateway.bench.summary import group_summaries, prediction_errors, summarize
from gateway.workloads.items import WorkloadItem

POLICIES = ("baseline", "speculative", "rules", "adaptive", "clairvoyant")
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
    gateways: int = 1  # gateway processes; more than one run behind haproxy (gateway/bench/balancer.py)
    balance: str = "leastconn"
    rolling_restart: bool = False  # restart each gateway in turn while the workload runs
    warm: str = "none"  # what a restarted gateway starts from: none | file | peers


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
    from gateway.emulator import EmulatedPair

    tag = f"{policy}-{repeat}" if repeat else policy
    env = {**scaled_priors(config.time_scale), **config.gateway_env, "SPECGATE_POLICY": policy}
    if policy == "clairvoyant":
        env["SPECGATE_ORACLE_FILE"] = str(write_oracle(items, config.profile, config.work_dir / "oracle.json"))
    inflight = 0
    inflight_at: dict[str, int] = {}

    def done(m: Measured) -> None:
        nonlocal inflight
        inflight -= 1
        on_done()

    async with EmulatedPair(profile=config.profile, host="127.0.0.1", baseline_port=0, speculative_port=0,
                            time_scale=config.time_scale, model_name=MODEL_NAME) as pair:
        pair.register_references({i.id: i.reference for i in items if i.reference is not None})
        env["SPECGATE_BASELINE_URLS"] = pair.baseline_url
        env["SPECGATE_SPECULATIVE_URLS"] = pair.speculative_url
        async with gateway_fleet(env, config.work_dir, tag, config.gateways, config.balance,
                                 config.warm) as fleet:
            url = fleet.url
            started = time.perf_counter()

            def sent(item_id: str) -> None:
                nonlocal inflight
                inflight_at[item_id] = inflight
                inflight += 1

            span = (items[-1].t - items[0].t) * config.time_scale if items else 0.0
            async with true_load_trace(pair, started, config.time_scale) as true_load, \
                    rolling_restart(fleet, span, started, config.time_scale, config.rolling_restart) as restarts:
                measured = await replay(items, url, MODEL_NAME, config.time_scale, on_done=done,
                                        timeout_s=config.timeout_s, on_send=sent)
            wall = time.perf_counter() - started
            metrics_text = "".join([await fetch_text(r.url + "/metrics") for r in fleet.replicas])
            try:
                admin_state = json.loads(await fetch_text(fleet.replicas[0].url + "/admin/state"))
            except Exception:  # the admin endpoint is optional for a bench; its absence is not an error
                admin_state = None
        emulator = {"baseline": _stats(pair.baseline), "speculative": _stats(pair.speculative)}
    (config.work_dir / f"gateway-{tag}.metrics.txt").write_text(metrics_text)
    records = [_record(m, config.time_scale, inflight_at.get(m.id, 0), repeat) for m in measured]
    log = [line for path in fleet.log_paths() for line in _read_log(path)]
    return {"records": records, "wall_s": round(wall, 2), "emulator": emulator, "log": log,
            "admin_state": admin_state, "true_load": true_load, "restarts": restarts}


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
        "restarts": [run.get("restarts", []) for run in runs],
        "true_load": [run.get("true_load", []) for run in runs],
        "requests": records,
    }


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
