"""`python -m gateway.bench.faults`: the gateway under injected faults, as real processes on 127.0.0.1.

For each fault (kill a backend, hang, garbage and truncated SSE, 500 half the time, client disconnects)
a fresh pair of fault-injecting backends and a fresh `python -m gateway serve` take a bounded closed-loop
load; the fault starts one second in. Every request ends in one class:

- completed: 200 and a whole answer (`[DONE]` for streams, a JSON completion otherwise)
- failed over: completed, but on the other backend after the first attempt failed (x-specgate-reason)
- cut mid-stream: the stream had started, then ended with an SSE error event (not retryable by design)
- failed: anything else (an error status, a broken answer); these are requests lost that could be retried

Then a soak: steady load for `--soak-s` seconds with a share of clients that leave early, sampling the
gateway's RSS, TCP connections and file descriptors (psutil) before, during and after.
Then (`--hostile-s`) a hostile client mixed into benign load against the emulated pair, compared with
the same load alone (gateway/bench/hostile.py).
Writes `gateway/bench/results/faults-<date>.json` and `.md`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import os
import platform
import random
import signal
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import psutil
from aiohttp import web

from gateway.bench.kit.metrics import scrape_sum
from gateway.bench.kit.procs import free_port, wait_ready

RESULTS = Path(__file__).parent / "results"
CHAT = "/v1/chat/completions"
MODEL = "fault-model"


# ------------------------------------------------------------------------------------------ backend

@dataclass
class FaultBackend:
    """vLLM-shaped: streams `chunks` events `chunk_delay_s` apart; `POST /_fault` switches the mode
    (ok | hang | garbage | truncate | flaky | status | slow_first); `GET /_stats` reports counters."""

    mode: str = "ok"
    chunks: int = 8
    chunk_delay_s: float = 0.02
    first_delay_s: float = 0.0
    calls: int = 0
    completed: int = 0
    aborts: list[float] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post(CHAT, self.completion)
        app.router.add_get("/health", self.health)
        app.router.add_get("/metrics", self.metrics)
        app.router.add_get("/v1/models", self.models)
        app.router.add_post("/_fault", self.fault)
        app.router.add_get("/_stats", self.stats)
        return app

    async def health(self, request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def metrics(self, request: web.Request) -> web.Response:
        return web.Response(text=f'vllm:num_requests_running{{model_name="{MODEL}"}} 0.0\n')

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def fault(self, request: web.Request) -> web.Response:
        for name, value in (await request.json()).items():
            setattr(self, name, value)
        return await self.stats(request)

    async def stats(self, request: web.Request) -> web.Response:
        return web.json_response({"mode": self.mode, "calls": self.calls, "completed": self.completed,
                                  "aborts": self.aborts})

    async def completion(self, request: web.Request) -> web.StreamResponse:
        self.calls += 1
        body = await request.json()
        mode = self.mode
        if mode == "flaky":
            mode = "status" if self.calls % 2 else "ok"
        if mode == "status":
            return web.json_response({"error": {"message": "injected", "type": "InternalServerError",
                                                "param": None, "code": 500}}, status=500)
        try:
            if mode == "hang":
                await asyncio.sleep(3600)
            if self.first_delay_s:
                await asyncio.sleep(self.first_delay_s)
            if not body.get("stream"):
                await asyncio.sleep(self.chunk_delay_s * self.chunks)
                self.completed += 1
                return web.json_response({
                    "id": "cmpl-f", "object": "chat.completion", "model": MODEL,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "tok " * self.chunks},
                                 "finish_reason": "length"}],
                    "usage": {"prompt_tokens": 3, "completion_tokens": self.chunks,
                              "total_tokens": self.chunks + 3}})
            return await self._stream(request, body, mode)
        except (asyncio.CancelledError, ConnectionResetError):
            self.aborts.append(time.monotonic())  # CLOCK_MONOTONIC: comparable across processes on Linux
            raise

    async def _stream(self, request: web.Request, body: dict[str, Any], mode: str) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        if mode == "garbage":
            await resp.write(b"data: {\"choices\": [{\"delta\": {\"content\": \"ok\"}}]}\n\ndata: {not json\x00\xff")
            return resp
        for i in range(self.chunks):
            if mode == "truncate" and i == self.chunks // 2:
                assert request.transport is not None
                request.transport.close()
                return resp
            await asyncio.sleep(self.chunk_delay_s)
            event = {"object": "chat.completion.chunk", "model": MODEL,
                     "choices": [{"index": 0, "delta": {"content": "tok "},
                                  "finish_reason": "length" if i == self.chunks - 1 else None}]}
            await resp.write(b"data: " + orjson.dumps(event) + b"\n\n")
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            usage = {"prompt_tokens": 3, "completion_tokens": self.chunks, "total_tokens": self.chunks + 3}
            await resp.write(b"data: " + orjson.dumps({"choices": [], "usage": usage}) + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        self.completed += 1
        await resp.write_eof()
        return resp


def complete_answer(data: bytes, stream: bool) -> bool:
    """A whole answer: a stream that reached `data: [DONE]`, or a completion with its choices."""
    return data.rstrip().endswith(b"data: [DONE]") if stream else b'"choices"' in data


async def serve_backend() -> None:
    runner = web.AppRunner(FaultBackend().app(), handler_cancellation=True, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"http://127.0.0.1:{port}", flush=True)
    await asyncio.Event().wait()


# ------------------------------------------------------------------------------------------ processes

class Backend:
    def __init__(self) -> None:
        self.proc: asyncio.subprocess.Process | None = None
        self.url = ""

    async def start(self) -> None:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "gateway.bench.faults", "--serve-backend", stdout=asyncio.subprocess.PIPE,
            start_new_session=True)
        assert self.proc.stdout is not None
        self.url = (await asyncio.wait_for(self.proc.stdout.readline(), 30)).decode().strip()

    async def call(self, session: aiohttp.ClientSession, **changes: Any) -> dict[str, Any]:
        if changes:
            async with session.post(self.url + "/_fault", json=changes) as r:
                return dict(await r.json())
        async with session.get(self.url + "/_stats") as r:
            return dict(await r.json())

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


GATEWAY_ENV = {
    "SPECGATE_POLICY": "baseline",  # every request lands on the backend that faults: the worst case
    "SPECGATE_HEALTH_INTERVAL_S": "0.5", "SPECGATE_SCRAPE_INTERVAL_S": "1.0", "SPECGATE_FIRST_BYTE_TIMEOUT_S": "1.0",
    "SPECGATE_IDLE_TIMEOUT_S": "1.0", "SPECGATE_EJECT_BASE_COOLDOWN_S": "2.0", "SPECGATE_DRAIN_TIMEOUT_S": "5",
    "SPECGATE_LOG_REQUESTS": "false", "SPECGATE_LOG_LEVEL": "WARNING", "SPECGATE_WORKERS": "1",
}


@contextlib.asynccontextmanager
async def system(log_dir: Path, name: str) -> AsyncIterator[tuple[Backend, Backend, str, psutil.Process]]:
    """Two fault backends and a gateway process in front of them; all stopped on exit."""
    base, spec = Backend(), Backend()
    await asyncio.gather(base.start(), spec.start())
    port = free_port()
    env = {**os.environ, **GATEWAY_ENV, "SPECGATE_HOST": "127.0.0.1", "SPECGATE_PORT": str(port),
           "SPECGATE_BASELINE_URLS": base.url, "SPECGATE_SPECULATIVE_URLS": spec.url}
    url = f"http://127.0.0.1:{port}"
    log = (log_dir / f"gateway-{name}.log").open("wb")
    gw = await asyncio.create_subprocess_exec(sys.executable, "-m", "gateway", "serve", env=env, stdout=log,
                                              stderr=log, start_new_session=True)
    try:
        await wait_ready(url, 30.0, gw)
        yield base, spec, url, psutil.Process(gw.pid)
    finally:
        if gw.returncode is None:
            gw.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(gw.wait(), 15)
            except TimeoutError:
                gw.kill()
                await gw.wait()
        log.close()
        await base.kill()
        await spec.kill()


# ------------------------------------------------------------------------------------------ load

@dataclass
class Tally:
    sent: int = 0
    completed: int = 0
    failed_over: int = 0
    cut_mid_stream: int = 0
    failed: int = 0
    client_aborted: int = 0
    failed_statuses: dict[str, int] = field(default_factory=dict)

    def fail(self, why: str) -> None:
        self.failed += 1
        self.failed_statuses[why] = self.failed_statuses.get(why, 0) + 1


def _body(stream: bool) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": "Summarize the fault report."}],
            "max_tokens": 8, "stream": stream}


async def one_request(session: aiohttp.ClientSession, url: str, stream: bool, tally: Tally,
                      leave: str | None = None) -> None:
    """One request; `leave` = before_first_token | mid_stream | unary makes the client go away early."""
    tally.sent += 1
    try:
        async with session.post(url + CHAT, json=_body(stream), timeout=aiohttp.ClientTimeout(total=30)) as r:
            if leave == "mid_stream":
                await r.content.readuntil(b"\n\n")
                tally.client_aborted += 1
                r.close()
                return
            data = b""
            try:
                async for chunk in r.content.iter_any():
                    data += chunk
            except aiohttp.ClientPayloadError:
                if r.status == 200 and stream and b'"error"' in data:
                    tally.cut_mid_stream += 1
                else:
                    tally.fail(f"{r.status} broken")
                return
            if r.status != 200:
                tally.fail(str(r.status))
                return
            if not complete_answer(data, stream):
                tally.fail("200 incomplete")
                return
            tally.completed += 1
            if r.headers.get("x-specgate-reason", "").startswith("failover"):
                tally.failed_over += 1
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        tally.fail(type(exc).__name__)


async def early_leaver(session: aiohttp.ClientSession, url: str, leave: str, tally: Tally,
                       after_s: float) -> None:
    """Leave before the first token / during a unary request: cancel the request after `after_s`."""
    task = asyncio.create_task(one_request(session, url, leave == "before_first_token", tally, leave))
    await asyncio.sleep(after_s)
    if not task.done():
        task.cancel()
        tally.client_aborted += 1
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def closed_loop(url: str, seconds: float, concurrency: int, tally: Tally, stream_share: float = 0.5,
                      leave_share: float = 0.0, seed: int = 0) -> None:
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def client() -> None:
            while time.monotonic() < deadline:
                stream = rng.random() < stream_share
                if rng.random() < leave_share:
                    leave = rng.choice(["before_first_token", "mid_stream", "unary"])
                    if leave == "mid_stream":
                        await one_request(session, url, True, tally, leave)
                    else:
                        await early_leaver(session, url, leave, tally, 0.05)
                else:
                    await one_request(session, url, stream, tally)

        await asyncio.gather(*(client() for _ in range(concurrency)))


# ------------------------------------------------------------------------------------------ scenarios

SCENARIOS: dict[str, str] = {
    "no_fault": "control: nothing injected",
    "kill_backend": "SIGKILL the baseline backend process 1 s in",
    "hang": "the baseline accepts and never answers (first-byte timeout 1 s)",
    "garbage_sse": "the baseline streams one event, then bytes that are not SSE (streams only)",
    "truncated_sse": "the baseline closes the connection half-way through each stream (streams only)",
    "flaky_500": "the baseline answers 500 to every other request",
    "client_disconnects": "clients leave before the first token, mid-stream and during unary requests",
}


async def run_scenario(name: str, seconds: float, concurrency: int, log_dir: Path) -> dict[str, Any]:
    tally = Tally()
    extra: dict[str, Any] = {}
    async with system(log_dir, name) as (base, _spec, url, _gw), aiohttp.ClientSession() as ctl:
        stream_share = 1.0 if name in ("garbage_sse", "truncated_sse") else 0.5
        leave_share = 1.0 if name == "client_disconnects" else 0.0
        if name == "client_disconnects":
            await base.call(ctl, chunks=40, chunk_delay_s=0.02, first_delay_s=0.2)
        load = asyncio.create_task(closed_loop(url, seconds, concurrency, tally, stream_share, leave_share))
        await asyncio.sleep(1.0)
        if name == "kill_backend":
            await base.kill()
        elif name in ("hang", "flaky_500", "garbage_sse", "truncated_sse"):
            mode = {"hang": "hang", "flaky_500": "flaky", "garbage_sse": "garbage", "truncated_sse": "truncate"}
            await base.call(ctl, mode=mode[name])
        await load
        await asyncio.sleep(0.5)
        extra["gateway_failovers_total"] = await scrape_sum(url, "specgate_failovers_total")
        extra["gateway_ejections_total"] = await scrape_sum(url, "specgate_backend_ejections_total")
        if name == "client_disconnects":
            stats = await base.call(ctl)
            extra["backend_saw_aborts"] = len(stats["aborts"])
        with contextlib.suppress(aiohttp.ClientError, OSError):
            extra["baseline_backend"] = await base.call(ctl)
            extra["baseline_backend"].pop("aborts", None)
    return {"scenario": name, "fault": SCENARIOS[name], "seconds": seconds, "concurrency": concurrency,
            **asdict(tally), **extra}


async def abort_latency(log_dir: Path, n: int = 30) -> dict[str, Any]:
    """Client closes the socket; how long until the backend process sees the upstream request aborted."""
    out: dict[str, list[float]] = {}
    async with system(log_dir, "abort-latency") as (base, _spec, url, _gw), aiohttp.ClientSession() as ctl:
        host, port = url.removeprefix("http://").split(":")
        for case in ("before_first_token", "mid_stream", "unary"):
            await base.call(ctl, chunks=200, chunk_delay_s=0.02, first_delay_s=5.0 if case == "before_first_token"
                            else 0.0)
            delays = []
            for _ in range(n):
                before = len((await base.call(ctl))["aborts"])
                payload = orjson.dumps(_body(case != "unary"))
                reader, writer = await asyncio.open_connection(host, int(port))
                writer.write(f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                             f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
                if case == "mid_stream":
                    got = b""
                    while got.count(b"data: ") < 2:
                        got += await asyncio.wait_for(reader.read(4096), 5)
                else:
                    await asyncio.sleep(0.15)
                t_close = time.monotonic()
                writer.transport.abort()
                aborts: list[float] = []
                for _ in range(200):
                    aborts = (await base.call(ctl))["aborts"]
                    if len(aborts) > before:
                        break
                    await asyncio.sleep(0.005)
                delays.append((aborts[-1] - t_close) * 1000 if len(aborts) > before else float("inf"))
            out[case] = sorted(delays)
    return {case: {"n": len(d), "p50_ms": round(d[len(d) // 2], 1), "max_ms": round(d[-1], 1),
                   "under_200ms": sum(x < 200 for x in d)} for case, d in out.items()}


def _sample(proc: psutil.Process) -> dict[str, float]:
    with proc.oneshot():
        conns = proc.net_connections(kind="tcp")
        return {"t": round(time.time(), 1), "rss_mb": round(proc.memory_info().rss / 2**20, 2),
                "tcp_connections": len(conns),
                "tcp_established": sum(c.status == psutil.CONN_ESTABLISHED for c in conns),
                "tcp_close_wait": sum(c.status == psutil.CONN_CLOSE_WAIT for c in conns),
                "fds": proc.num_fds(), "threads": proc.num_threads()}


async def soak(seconds: float, concurrency: int, log_dir: Path) -> dict[str, Any]:
    tally = Tally()
    async with system(log_dir, "soak") as (_base, _spec, url, gw):
        await closed_loop(url, 10.0, concurrency, Tally(), leave_share=0.1, seed=1)  # warm-up, not counted
        await asyncio.sleep(2.0)
        before = _sample(gw)
        samples = [before]
        load = asyncio.create_task(closed_loop(url, seconds, concurrency, tally, leave_share=0.1, seed=2))
        while not load.done():
            await asyncio.wait({load}, timeout=min(30.0, max(seconds / 10, 1.0)))
            samples.append(_sample(gw))
        await asyncio.sleep(3.0)  # let closed connections and cancelled requests settle
        after = _sample(gw)
        samples.append(after)
        failovers = await scrape_sum(url, "specgate_failovers_total")
    return {"seconds": seconds, "concurrency": concurrency, "client_leave_share": 0.1, **asdict(tally),
            "requests_per_s": round(tally.sent / seconds, 1), "gateway_failovers_total": failovers,
            "before": before, "after": after, "rss_growth_mb": round(after["rss_mb"] - before["rss_mb"], 2),
            "samples": samples}


# ------------------------------------------------------------------------------------------ report

def render_md(result: dict[str, Any]) -> str:
    lines = [f"# Fault injection and soak — {result['date']}", "",
             f"Machine: {result['machine']}  ", f"Command: `{result['command']}`  ", ""]
    if result["scenarios"]:
        lines += ["Gateway: `python -m gateway serve`, policy `baseline` (all traffic on the faulty backend), "
                  "first-byte and idle timeouts 1 s, eject after 3 consecutive failures, cooldown 2 s.", "",
                  "| scenario | fault | sent | completed | failed over | cut mid-stream | failed | client left |",
                  "|---|---|---:|---:|---:|---:|---:|---:|"]
    for s in result["scenarios"]:
        lines.append(f"| {s['scenario']} | {s['fault']} | {s['sent']} | {s['completed']} | {s['failed_over']} | "
                     f"{s['cut_mid_stream']} | {s['failed']} | {s['client_aborted']} |")
    if result["scenarios"]:
        lines += ["", "*failed over*: completed on the other backend after the first attempt failed (a subset of "
                  "*completed*). *cut mid-stream*: the response had started; it ended with an SSE error event and "
                  "a closed connection, as designed (no retry after the first byte). *failed*: lost although it "
                  "could have been retried.", ""]
    for s in result["scenarios"]:
        if "backend_saw_aborts" in s:
            lines += [f"Client disconnects: {s['client_aborted']} clients left early; the backend saw "
                      f"{s['backend_saw_aborts']} aborted requests.", ""]
        if s["failed_statuses"]:
            lines += [f"{s['scenario']}: failures by kind {s['failed_statuses']}", ""]
    if result.get("abort_latency"):
        lines += ["## Client disconnect → backend sees the abort", "",
                  "| when the client leaves | n | p50 ms | max ms | under 200 ms |", "|---|---:|---:|---:|---:|"]
        for case, a in result["abort_latency"].items():
            lines.append(f"| {case} | {a['n']} | {a['p50_ms']} | {a['max_ms']} | {a['under_200ms']} |")
        lines.append("")
    if result.get("hostile"):
        from gateway.bench.hostile import render_md as render_hostile

        lines += render_hostile(result["hostile"])
    s = result.get("soak")
    if s:
        b, a = s["before"], s["after"]
        lines += [f"## Soak: {s['seconds']:.0f} s at concurrency {s['concurrency']} "
                  f"({s['requests_per_s']} req/s, 10% of clients leave early)", "",
                  f"Requests: sent {s['sent']}, completed {s['completed']}, client left {s['client_aborted']}, "
                  f"failed {s['failed']} {s['failed_statuses'] or ''}", "",
                  "| gateway process | before | after |", "|---|---:|---:|",
                  f"| RSS MB | {b['rss_mb']} | {a['rss_mb']} |",
                  f"| TCP connections | {b['tcp_connections']} | {a['tcp_connections']} |",
                  f"| established | {b['tcp_established']} | {a['tcp_established']} |",
                  f"| CLOSE_WAIT | {b['tcp_close_wait']} | {a['tcp_close_wait']} |",
                  f"| file descriptors | {b['fds']} | {a['fds']} |",
                  f"| threads | {b['threads']} | {a['threads']} |", "",
                  "RSS over the soak (MB): " + ", ".join(str(x["rss_mb"]) for x in s["samples"]), ""]
    return "\n".join(lines)


def machine() -> str:
    mem = psutil.virtual_memory().total / 2**30
    return (f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, {mem:.0f} GiB, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    log_dir = Path(args.log_dir)
    names = [] if args.scenarios == "none" else args.scenarios.split(",") if args.scenarios else list(SCENARIOS)
    result: dict[str, Any] = {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"), "machine": machine(),
                              "command": " ".join(["python -m gateway.bench.faults", *sys.argv[1:]]),
                              "gateway_env": GATEWAY_ENV, "scenarios": []}
    for name in names:
        s = await run_scenario(name, args.seconds, args.concurrency, log_dir)
        print(f"{name:<20} sent {s['sent']:>5}  completed {s['completed']:>5}  failed over {s['failed_over']:>4}  "
              f"cut {s['cut_mid_stream']:>4}  failed {s['failed']:>3}  left {s['client_aborted']:>4}", flush=True)
        result["scenarios"].append(s)
    if not args.skip_abort_latency and names:
        result["abort_latency"] = await abort_latency(log_dir)
        print("abort latency", result["abort_latency"], flush=True)
    if args.hostile_s > 0:
        from gateway.bench.hostile import hostile_comparison

        attacks = args.hostile_attacks.split(",") if args.hostile_attacks else None
        result["hostile"] = await hostile_comparison(log_dir, args.hostile_s, args.concurrency, attacks)
    if args.soak_s > 0:
        result["soak"] = await soak(args.soak_s, args.concurrency, log_dir)
        s = result["soak"]
        print(f"soak {args.soak_s:.0f}s: sent {s['sent']} failed {s['failed']} rss {s['before']['rss_mb']} -> "
              f"{s['after']['rss_mb']} MB, conns {s['before']['tcp_connections']} -> "
              f"{s['after']['tcp_connections']}, fds {s['before']['fds']} -> {s['after']['fds']}", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.bench.faults", description=__doc__.split("\n")[0])
    parser.add_argument("--soak-s", type=float, default=600.0, help="soak duration (0 to skip)")
    parser.add_argument("--seconds", type=float, default=6.0, help="load duration of each fault scenario")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--scenarios", default="", help="comma-separated subset of: " + ",".join(SCENARIOS)
                        + " (none: no fault scenario)")
    parser.add_argument("--hostile-s", type=float, default=300.0,
                        help="length of each run of the hostile-client comparison (0 to skip)")
    parser.add_argument("--hostile-attacks", default="", help="comma-separated subset of the hostile attacks "
                        "(default: all; see gateway/bench/hostile.py ATTACKS and slowloris)")
    parser.add_argument("--skip-abort-latency", action="store_true")
    parser.add_argument("--out", default="", help="output path stem (default results/faults-<date>)")
    parser.add_argument("--log-dir", default="/tmp/specgate-faults-logs")
    parser.add_argument("--serve-backend", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve_backend:
        asyncio.run(serve_backend())
        return 0
    Path(args.log_dir).mkdir(parents=True, exist_ok=True)
    result = asyncio.run(run(args))
    stem = Path(args.out) if args.out else RESULTS / f"faults-{dt.date.today().isoformat()}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    stem.with_suffix(".json").write_bytes(orjson.dumps(result, option=orjson.OPT_INDENT_2))
    stem.with_suffix(".md").write_text(render_md(result))
    print(f"wrote {stem.with_suffix('.json')} and .md")
    hostile = result.get("hostile", {}).get("hostile")
    hostile_ok = hostile is None or (hostile["benign_success_rate"] == 1.0 and hostile["ejections"] == 0)
    return 0 if all(s["failed"] == 0 for s in result["scenarios"]) and hostile_ok else 1


if __name__ == "__main__":
    sys.exit(main())
