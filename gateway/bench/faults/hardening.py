"""`python -m gateway.bench.faults.hardening`: issue 35's state, scrape, worker, peer, parse and key scenarios.

Each scenario starts a fresh `python -m gateway serve` on 127.0.0.1 in front of two in-process fault backends
(`FaultBackend`, with a `/metrics` page the scenario sets), injects one defect of the second hostile review,
and records what a user would see: benign closed-loop requests completed or failed, `/admin/*` answers, the
gateway's exit status, its RSS and time to ready. Writes `<out>.json` and prints one line per scenario.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import psutil
from aiohttp import web

from gateway.bench.faults.backend import CHAT, MODEL, FaultBackend
from gateway.bench.faults.load import Tally, closed_loop
from gateway.bench.kit.procs import free_port, stop_process, wait_ready

ENV = {"SPECGATE_POLICY": "adaptive", "SPECGATE_HEALTH_INTERVAL_S": "0.5", "SPECGATE_SCRAPE_INTERVAL_S": "0.25",
       "SPECGATE_LOAD_SCRAPE_INTERVAL_S": "0.1", "SPECGATE_LOG_REQUESTS": "false", "SPECGATE_LOG_LEVEL": "INFO",
       "SPECGATE_WORKERS": "1", "SPECGATE_ADMIN_API_KEY": "bench-admin"}
ADMIN = {"Authorization": "Bearer bench-admin"}
GOOD_METRICS = ("vllm:num_requests_running 0.0\nvllm:num_requests_waiting 0.0\n"
                "vllm:generation_tokens_total {gen}\nvllm:spec_decode_num_drafts_total {drafts}\n"
                "vllm:spec_decode_num_draft_tokens_total {draft_tokens}\n"
                "vllm:spec_decode_num_accepted_tokens_total {accepted}\n")


class ScriptedBackend(FaultBackend):
    """A fault backend whose `/metrics` reads `metrics_text` (`{gen}` etc. filled from its completed count)."""

    metrics_text: str = GOOD_METRICS

    async def metrics(self, request: web.Request) -> web.Response:
        n = self.completed
        text = self.metrics_text.format(gen=16.0 * n, drafts=8.0 * n, draft_tokens=32.0 * n, accepted=8.0 * n)
        return web.Response(text=text)


@contextlib.asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[str]:
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]
    finally:
        await runner.cleanup()


class Gateway:
    """`python -m gateway serve` with `ENV` plus a scenario's settings, in front of two scripted backends."""

    def __init__(self, log_dir: Path, name: str, **env: str) -> None:
        self.log_path, self.env = log_dir / f"hardening-{name}.log", env
        self.base, self.spec = ScriptedBackend(), ScriptedBackend()
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""
        self.ready_s = math.nan
        self.peak_rss_mb = 0.0

    async def start(self, base_url: str, spec_url: str) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}"
        env = {**os.environ, **ENV, "SPECGATE_HOST": "127.0.0.1", "SPECGATE_PORT": str(port),
               "SPECGATE_BASELINE_URLS": base_url, "SPECGATE_SPECULATIVE_URLS": spec_url, **self.env}
        with self.log_path.open("wb") as log:
            t0 = time.monotonic()
            self.proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "gateway", "serve", env=env,
                                                             stdout=log, stderr=log, start_new_session=True)
        watch = asyncio.create_task(self._watch_rss())
        try:
            await wait_ready(self.url, 60.0, self.proc)
            self.ready_s = round(time.monotonic() - t0, 3)
        finally:
            watch.cancel()

    async def _watch_rss(self) -> None:
        assert self.proc is not None
        with contextlib.suppress(psutil.Error):
            proc = psutil.Process(self.proc.pid)
            while True:
                rss = sum(p.memory_info().rss for p in [proc, *proc.children(recursive=True)])
                self.peak_rss_mb = max(self.peak_rss_mb, round(rss / 2**20, 1))
                await asyncio.sleep(0.05)

    def log_events(self, event: str) -> list[dict[str, Any]]:
        out = []
        for line in self.log_path.read_bytes().splitlines():
            if f'"event":"{event}"'.encode() in line:
                with contextlib.suppress(orjson.JSONDecodeError):
                    out.append(orjson.loads(line))
        return out

    async def stop(self) -> int | None:
        if self.proc is not None:
            await stop_process(self.proc, 20.0)
            return self.proc.returncode
        return None


@contextlib.asynccontextmanager
async def system(log_dir: Path, name: str, **env: str) -> AsyncIterator[Gateway]:
    gw = Gateway(log_dir, name, **env)
    async with serve(gw.base.app()) as base_url, serve(gw.spec.app()) as spec_url:
        try:
            await gw.start(base_url, spec_url)
            yield gw
        finally:
            await gw.stop()


async def get(url: str, path: str) -> tuple[int, bytes]:
    async with aiohttp.ClientSession() as s, s.get(url + path, headers=ADMIN) as r:
        return r.status, await r.read()


def _tally(t: Tally) -> dict[str, Any]:
    return {"benign": {k: v for k, v in asdict(t).items() if v}}


# ------------------------------------------------------------------------------------------ scenarios


def poisoned_document(infinite_count: bool = False) -> bytes:
    from gateway import persist
    from gateway.core.learner import Learner
    from gateway.core.learner_state import CLASS_KEYS
    from gateway.settings import Settings

    settings = Settings()
    doc = persist.state_document(Learner(settings.learner_config()))
    lrn = doc["learner"]
    lrn["log_output"] = {k: [1e6, 10.0, 100.0, 0.0] for k in sorted(CLASS_KEYS)}
    lrn["tokens_per_step"] = {k: [1e300, 10.0, 100.0, 0.0] for k in sorted(CLASS_KEYS)}
    lrn["step_models"]["baseline"][0] = 1e6
    if infinite_count:
        lrn["backend_tokens_per_step"][2] = math.inf
        import json

        return json.dumps(doc).encode()  # the standard library writes `Infinity`
    lrn["backend_tokens_per_step"][2] = 1e300
    return orjson.dumps(doc)


async def _state_file(log_dir: Path, name: str, seconds: float, concurrency: int, infinite: bool) -> dict[str, Any]:
    path = log_dir / f"{name}.json"
    path.write_bytes(poisoned_document(infinite))
    tally = Tally()
    async with system(log_dir, name, SPECGATE_STATE_FILE=str(path), SPECGATE_STATE_SAVE_INTERVAL_S="0.5") as gw:
        await closed_loop(gw.url, seconds, concurrency, tally)
        admin_state, _ = await get(gw.url, "/admin/state")
        admin_learner, body = await get(gw.url, "/admin/learner")
        notes = len(gw.log_events("state_clamped"))
        ignored = [e.get("why") for e in gw.log_events("state_ignored")]
    saved = orjson.loads(path.read_bytes())["learner"]
    return {**_tally(tally), "ready_s": gw.ready_s, "admin_state": admin_state, "admin_learner": admin_learner,
            "admin_learner_has_null": b"null" in body, "clamped_notes": notes, "ignored": ignored,
            "saved_max_log_output": max((v[0] for v in saved["log_output"].values()), default=None),
            "exit_status": gw.proc.returncode if gw.proc else None}


async def poisoned_state(log_dir: Path, seconds: float, concurrency: int) -> dict[str, Any]:
    return await _state_file(log_dir, "poisoned_state", seconds, concurrency, infinite=False)


async def infinite_count_state(log_dir: Path, seconds: float, concurrency: int) -> dict[str, Any]:
    return await _state_file(log_dir, "infinite_count_state", seconds, concurrency, infinite=True)


async def nan_metrics(log_dir: Path, seconds: float, concurrency: int) -> dict[str, Any]:
    tally = Tally()
    async with system(log_dir, "nan_metrics") as gw:
        load = asyncio.create_task(closed_loop(gw.url, seconds, concurrency, tally))
        await asyncio.sleep(1.0)
        bad = GOOD_METRICS.replace("running 0.0", "running NaN").replace("accepted_tokens_total {accepted}",
                                                                         "accepted_tokens_total +Inf")
        gw.base.metrics_text = gw.spec.metrics_text = bad
        await asyncio.sleep(1.0)
        gw.base.metrics_text = gw.spec.metrics_text = GOOD_METRICS
        await load
        await asyncio.sleep(1.0)
        _, learner = await get(gw.url, "/admin/learner")
        _, metrics = await get(gw.url, "/metrics")
        bad_scrapes = len(gw.log_events("bad_metrics"))
    nan_series = sorted({line.split("{")[0] for line in metrics.decode().splitlines()
                         if line.startswith("specgate_") and line.rsplit(" ", 1)[-1] in ("NaN", "nan")})
    return {**_tally(tally), "admin_learner_has_null": b"null" in learner, "nan_series": nan_series,
            "bad_scrapes_logged": bad_scrapes}


async def worker_kill(log_dir: Path, seconds: float, concurrency: int) -> dict[str, Any]:
    tally = Tally()
    prom = log_dir / "hardening-prom"
    prom.mkdir(exist_ok=True)
    for stale in prom.iterdir():
        stale.unlink()
    async with system(log_dir, "worker_kill", SPECGATE_WORKERS="2", PROMETHEUS_MULTIPROC_DIR=str(prom)) as gw:
        while len(gw.log_events("listening")) < 2:  # noqa: ASYNC110 -- polling a log file
            await asyncio.sleep(0.05)
        victim = int(gw.log_events("listening")[0]["pid"])
        load = asyncio.create_task(closed_loop(gw.url, seconds, concurrency, tally))
        await asyncio.sleep(1.0)
        os.kill(victim, signal.SIGKILL)
        await load
        await asyncio.sleep(1.0)
        _, metrics = await get(gw.url, "/metrics")
        died = gw.log_events("worker_died")
        listening = gw.log_events("listening")
    inflight = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.decode().splitlines()
                   if line.startswith("specgate_inflight_requests{"))
    return {**_tally(tally), "worker_died": [{k: e.get(k) for k in ("pid", "how", "restart_in_s")} for e in died],
            "workers_started": len(listening), "inflight_after": inflight,
            "victim_files_left": sorted(p.name for p in prom.iterdir() if f"_{victim}.db" in p.name
                                        and p.name.startswith("gauge_live")),
            "exit_status": gw.proc.returncode if gw.proc else None}


def _peer_app(kind: str) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        if kind == "hung":
            await asyncio.sleep(3600)
        if kind.startswith("keys:"):
            from gateway import persist
            from gateway.core.learner import Learner
            from gateway.settings import Settings

            doc = persist.state_document(Learner(Settings().learner_config()))
            doc["learner"]["log_output"] = {f"made-up-{i}/greedy": [5.0, 1.0, 1.0, 0.0] for i in range(int(kind[5:]))}
            return web.Response(body=orjson.dumps(doc), content_type="application/json")
        resp = web.StreamResponse()  # endless: 1.5 GB of a JSON string, 64 KiB at a time
        await resp.prepare(request)
        await resp.write(b'{"format": "specgate-learner", "pad": "')
        chunk = b"x" * 65536
        with contextlib.suppress(ConnectionResetError):  # the reader stopped at its cap
            for _ in range(1_500_000_000 // len(chunk)):
                await resp.write(chunk)
        return resp

    app = web.Application()
    app.router.add_get("/admin/learner", handle)
    return app


async def hostile_peers(log_dir: Path, seconds: float, concurrency: int) -> dict[str, Any]:
    async with contextlib.AsyncExitStack() as stack:
        peers = [await stack.enter_async_context(serve(_peer_app(kind)))
                 for kind in ("hung", "hung", "hung", "endless", "keys:100000", "keys:20000")]
        tally = Tally()
        async with system(log_dir, "hostile_peers", SPECGATE_PEERS=",".join(peers)) as gw:
            t0 = time.perf_counter()
            status, _ = await get(gw.url, "/admin/state")
            admin_state_ms = round((time.perf_counter() - t0) * 1000, 1)
            await closed_loop(gw.url, seconds, concurrency, tally)
            unavailable = [str(e.get("why"))[:80] for e in gw.log_events("peer_unavailable")]
            ignored = [str(e.get("why"))[:80] for e in gw.log_events("state_ignored")]
    return {**_tally(tally), "ready_s": gw.ready_s, "peak_rss_mb_during_start": gw.peak_rss_mb,
            "admin_state": status, "admin_state_ms": admin_state_ms, "peer_unavailable": unavailable,
            "state_ignored": ignored}


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(len(ordered) * q / 100), len(ordered) - 1)] if ordered else math.nan


async def parse_flood(log_dir: Path, seconds: float, concurrency: int) -> dict[str, Any]:
    """Four 8 MiB `{}`-heavy bodies at a time, round after round, beside a legitimate 300 KB request in a loop."""
    bomb = b'{"model":"m","messages":[' + b"{}," * 2_600_000 + b"5]}"
    legit = orjson.dumps({"model": MODEL, "max_tokens": 8,
                          "messages": [{"role": "user", "content": "word " * 60_000}]})
    flood: dict[str, int] = {}
    legit_s: list[float] = []
    legit_status: dict[str, int] = {}
    health: list[float] = []
    async with system(log_dir, "parse_flood") as gw, aiohttp.ClientSession() as s:
        deadline = time.monotonic() + seconds

        async def post(body: bytes, out: dict[str, int], times: list[float] | None = None) -> None:
            t0 = time.perf_counter()
            async with s.post(gw.url + CHAT, data=body, headers={"Content-Type": "application/json"}) as r:
                await r.read()
            out[str(r.status)] = out.get(str(r.status), 0) + 1
            if times is not None:
                times.append(time.perf_counter() - t0)

        async def flooder() -> None:
            while time.monotonic() < deadline:
                await asyncio.gather(*(post(bomb, flood) for _ in range(4)))

        async def user() -> None:
            await asyncio.sleep(0.3)
            while time.monotonic() < deadline:
                await post(legit, legit_status, legit_s)

        async def poll() -> None:
            while time.monotonic() < deadline:
                t0 = time.perf_counter()
                async with s.get(gw.url + "/health") as r:
                    await r.read()
                health.append(time.perf_counter() - t0)
                await asyncio.sleep(0.05)

        await asyncio.gather(flooder(), user(), poll())
    return {"flood_statuses": flood, "legit_statuses": legit_status, "legit_n": len(legit_s),
            "legit_p50_s": round(_pct(legit_s, 50), 3), "legit_max_s": round(max(legit_s, default=math.nan), 3),
            "health_p50_ms": round(_pct(health, 50) * 1000, 1), "health_p99_ms": round(_pct(health, 99) * 1000, 1)}


async def blank_admin_key(log_dir: Path, seconds: float, concurrency: int) -> dict[str, Any]:
    """`SPECGATE_ADMIN_API_KEY=""`: refused at start, or (before) admin endpoints open without a key."""
    result: dict[str, Any] = {"started": False, "admin_state_without_key": None}
    try:
        async with system(log_dir, "blank_admin_key", SPECGATE_ADMIN_API_KEY="") as gw:
            result["started"] = True
            async with aiohttp.ClientSession() as s, s.get(gw.url + "/admin/state") as r:
                result["admin_state_without_key"] = r.status
    except RuntimeError:
        pass
    lines = [line for line in (log_dir / "hardening-blank_admin_key.log").read_text(errors="replace").splitlines()
             if "blank" in line]
    return {**result, "error": lines[-1][:200] if lines else None}


SCENARIOS: dict[str, Callable[[Path, float, int], Awaitable[dict[str, Any]]]] = {
    "poisoned_state": poisoned_state, "infinite_count_state": infinite_count_state, "nan_metrics": nan_metrics,
    "worker_kill": worker_kill, "hostile_peers": hostile_peers, "parse_flood": parse_flood,
    "blank_admin_key": blank_admin_key,
}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    log_dir = Path(args.log_dir)
    names = args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
    out: dict[str, Any] = {"command": " ".join(["python -m gateway.bench.faults.hardening", *sys.argv[1:]]),
                           "load_average": os.getloadavg(), "scenarios": {}}
    for name in names:
        try:
            result = await SCENARIOS[name](log_dir, args.seconds, args.concurrency)
        except (RuntimeError, TimeoutError, OSError, aiohttp.ClientError, ValueError, KeyError) as exc:
            result = {"error": f"{type(exc).__name__}: {exc}"[:300]}  # a gateway that did not start, for one
        out["scenarios"][name] = result
        print(name, orjson.dumps(result).decode(), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.bench.faults.hardening", description=__doc__)
    parser.add_argument("--seconds", type=float, default=5.0, help="benign load per scenario")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--scenarios", default="", help="comma-separated subset of: " + ",".join(SCENARIOS))
    parser.add_argument("--out", default="", help="write the results as JSON here")
    parser.add_argument("--log-dir", default="/tmp/specgate-hardening-logs")
    args = parser.parse_args(argv)
    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    result = asyncio.run(run(args))
    if args.out:
        Path(args.out).write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
