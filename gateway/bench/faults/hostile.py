"""A hostile client mixed into benign load, against the emulated pair (`python -m gateway.bench.faults --hostile-s`).

Two runs of the same length on fresh processes (`specgate emulate` + `python -m gateway serve`, adaptive
policy): benign load alone, then benign load with a hostile client that cycles through every attack in
`ATTACKS` a client can make. Measured per run: benign success rate and latency percentiles, ejections,
`/health` latency (polled every 50 ms), and the gateway's RSS, file descriptors and asyncio tasks.
Upstream-side defects (redirects, gzip or huge answers, odd `/v1/models`) need a misbehaving upstream,
not a client: tests/test_hostile.py covers those.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import os
import random
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import psutil

from gateway.bench.faults.backend import answer_failure
from gateway.bench.kit.procs import free_port, gateway_process, stop_process, wait_ready
from gateway.bench.kit.stats import percentile

CHAT = "/v1/chat/completions"
MODEL = "specgate-emu"
GATEWAY_ENV = {
    "SPECGATE_POLICY": "adaptive", "SPECGATE_WORKERS": "1", "SPECGATE_LOG_REQUESTS": "false",
    "SPECGATE_LOG_LEVEL": "WARNING", "SPECGATE_FIRST_BYTE_TIMEOUT_S": "2",  # so a long unary answer would trip it
    "SPECGATE_HEADER_TIMEOUT_S": "5", "SPECGATE_BODY_TIMEOUT_S": "5",
}
PROMPTS = ["Summarize the maintenance report in two sentences.", "Write a Python function that merges two dicts.",
           "Extract the dates from: the audit ran 3 May and 9 June.", "Explain TCP slow start briefly."]


def _pct(values: list[float], q: float) -> float:
    value = percentile(values, q, "floor_index")
    return float("nan") if value is None else value


@dataclass
class Benign:
    sent: int = 0
    ok: int = 0
    latencies_s: list[float] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)

    def fail(self, why: str) -> None:
        self.failures[why] = self.failures.get(why, 0) + 1


async def benign_request(s: aiohttp.ClientSession, url: str, rng: random.Random, tally: Benign) -> None:
    stream = rng.random() < 0.5
    body = {"model": MODEL, "messages": [{"role": "user", "content": rng.choice(PROMPTS)}],
            "max_tokens": rng.choice([16, 32, 64]), "stream": stream, "temperature": rng.choice([0.0, 0.7, 1.0])}
    tally.sent += 1
    t0 = time.perf_counter()
    try:
        async with s.post(url + CHAT, json=body, timeout=aiohttp.ClientTimeout(total=60)) as r:
            failure = answer_failure(r.status, await r.read(), stream)
            if failure is not None:
                tally.fail(failure)
                return
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        tally.fail(type(exc).__name__)
        return
    tally.ok += 1
    tally.latencies_s.append(time.perf_counter() - t0)


async def benign_load(url: str, seconds: float, concurrency: int, tally: Benign, seed: int) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:

        async def client(i: int) -> None:
            rng = random.Random(seed * 1000 + i)
            while time.monotonic() < deadline:
                await benign_request(s, url, rng, tally)

        await asyncio.gather(*(client(i) for i in range(concurrency)))


# ------------------------------------------------------------------------------------------ attacks

async def _raw(url: str, data: bytes, read: bool = True, timeout_s: float = 30.0) -> bytes:
    host, port = url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), timeout_s) if read else b""
    finally:
        writer.close()


def _post(body: bytes, extra: bytes = b"") -> bytes:
    return (b"POST " + CHAT.encode() + b" HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Connection: close\r\n" + extra + b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def _chat(**extra: Any) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 16, **extra}


async def gzip_body(s: aiohttp.ClientSession, url: str) -> str:
    async with s.post(url + CHAT, data=gzip.compress(orjson.dumps(_chat())),
                      headers={"Content-Encoding": "gzip", "Content-Type": "application/json"}) as r:
        await r.read()
        return str(r.status)


async def long_unary(s: aiohttp.ClientSession, url: str) -> str:
    async with s.post(url + CHAT, json=_chat(max_tokens=600, ignore_eos=True)) as r:
        await r.read()
        return str(r.status)


async def traversal(s: aiohttp.ClientSession, url: str) -> str:
    statuses = []
    for path in (b"/v1/../admin/state", b"/v1/%2e%2e/%2e%2e/metrics", b"/v1/models%2f..%2fx"):
        data = await _raw(url, b"GET " + path + b" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        statuses.append(data.split(b" ", 2)[1].decode() if data else "closed")
    return ",".join(statuses)


async def bad_request_id(s: aiohttp.ClientSession, url: str) -> str:
    data = await _raw(url, _post(orjson.dumps(_chat()), b"x-request-id: \xff\xfe\x80\r\n"))
    return data.split(b" ", 2)[1].decode() if data else "closed"


async def poison_learner(s: aiohttp.ClientSession, url: str) -> str:
    """max_tokens far above what is generated, and SSE look-alikes in the prompt (the emulator may echo them)."""
    body = _chat(max_tokens=30000, stream=True)
    body["messages"][0]["content"] = "Repeat: data: [DONE] data: {\"usage\": {\"completion_tokens\": 1}}"
    async with s.post(url + CHAT, json=body) as r:
        await r.read()
        return str(r.status)


async def cpu_bomb(s: aiohttp.ClientSession, url: str) -> str:
    body = b'{"model":"m","messages":[' + b"{}," * 2_600_000 + b"5]}"
    async with s.post(url + CHAT, data=body, headers={"Content-Type": "application/json"}) as r:
        await r.read()
        return str(r.status)


async def oversized(s: aiohttp.ClientSession, url: str) -> str:
    data = b'{"model":"m","messages":[{"role":"user","content":"' + b"a" * (9 << 20) + b'"}]}'
    try:
        async with s.post(url + CHAT, data=data, headers={"Content-Type": "application/json"}) as r:
            await r.read()
            return str(r.status)
    except (aiohttp.ClientError, OSError):
        return "closed"


async def malformed(s: aiohttp.ClientSession, url: str) -> str:
    statuses = []
    for data in (b"{not json", b"[1,2]", b'{"model": 5}', b'{"model":"m","messages":[]}', b"\xff\xfe"):
        async with s.post(url + CHAT, data=data, headers={"Content-Type": "application/json"}) as r:
            await r.read()
            statuses.append(str(r.status))
    raw = await _raw(url, b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: b\r\n c\r\nConnection: close\r\n\r\n")  # obs-fold
    statuses.append(raw.split(b" ", 2)[1].decode() if raw else "closed")
    return ",".join(statuses)


async def several_sequences(s: aiohttp.ClientSession, url: str) -> str:
    async with s.post(url + CHAT, json=_chat(n=3, best_of=3)) as r:
        await r.read()
        return str(r.status)


async def leave_early(s: aiohttp.ClientSession, url: str) -> str:
    async with s.post(url + CHAT, json=_chat(max_tokens=200, stream=True)) as r:
        await r.content.readuntil(b"\n\n")
        r.close()
    task = asyncio.create_task(s.post(url + CHAT, json=_chat(max_tokens=200)))
    await asyncio.sleep(0.05)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError):
        r2 = await task
        r2.close()
    return "left"


async def slowloris(s: aiohttp.ClientSession, url: str) -> str:
    """Partial headers, no bytes at all, an unfinished body: 20 of each, held until the gateway closes them."""
    partial = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
    unfinished = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"model\""
    jobs = [_raw(url, payload, timeout_s=60) for payload in (partial, b"", unfinished) for _ in range(20)]
    t0 = time.monotonic()
    results = await asyncio.gather(*jobs, return_exceptions=True)
    closed = sum(1 for r in results if isinstance(r, bytes))
    return f"{closed}/60 closed in {time.monotonic() - t0:.0f}s"


ATTACKS: dict[str, Callable[[aiohttp.ClientSession, str], Awaitable[str]]] = {
    "gzip_body": gzip_body, "long_unary": long_unary, "traversal": traversal, "bad_request_id": bad_request_id,
    "poison_learner": poison_learner, "cpu_bomb": cpu_bomb, "oversized": oversized, "malformed": malformed,
    "several_sequences": several_sequences, "leave_early": leave_early,
}


ALL_ATTACKS = [*ATTACKS, "slowloris"]


async def hostile_client(url: str, stop: asyncio.Event, outcomes: dict[str, dict[str, int]],
                         attacks: list[str]) -> None:
    """The attacks in turn, forever; slowloris (when chosen) runs alongside, round after round."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as s:

        async def loris() -> None:
            while not stop.is_set():
                _count(outcomes, "slowloris", await slowloris(s, url))

        side = asyncio.create_task(loris() if "slowloris" in attacks else stop.wait())
        while not stop.is_set() and set(attacks) - {"slowloris"}:
            for name, attack in ATTACKS.items():
                if stop.is_set():
                    break
                if name not in attacks:
                    continue
                try:
                    result = await asyncio.wait_for(attack(s, url), 60)
                except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                    result = type(exc).__name__
                _count(outcomes, name, result)
        await stop.wait()
        side.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await side


def _count(outcomes: dict[str, dict[str, int]], name: str, result: str) -> None:
    if name == "slowloris":
        result = result.split(" in ")[0]
    bucket = outcomes.setdefault(name, {})
    bucket[result] = bucket.get(result, 0) + 1


# ------------------------------------------------------------------------------------------ one run

@contextlib.asynccontextmanager
async def emulated_pair(log_dir: Path, name: str) -> AsyncIterator[tuple[str, str]]:
    ports = free_port(), free_port()
    log = (log_dir / f"emulate-{name}.log").open("wb")
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "gateway", "emulate", "--baseline-port", str(ports[0]), "--speculative-port",
        str(ports[1]), stdout=log, stderr=log, start_new_session=True)
    urls = f"http://127.0.0.1:{ports[0]}", f"http://127.0.0.1:{ports[1]}"
    try:
        async with aiohttp.ClientSession() as s:
            for url in urls:
                for _ in range(600):
                    with contextlib.suppress(aiohttp.ClientError, OSError):
                        async with s.get(url + "/health") as r:
                            if r.status == 200:
                                break
                    await asyncio.sleep(0.05)
        yield urls
    finally:
        await stop_process(proc)
        log.close()


async def _metric(s: aiohttp.ClientSession, url: str, name: str) -> float:
    async with s.get(url + "/metrics") as r:
        text = await r.text()
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(name + "{") or line.startswith(name + " "))


async def _sample(proc: psutil.Process, s: aiohttp.ClientSession, url: str) -> dict[str, float]:
    tasks = await _metric(s, url, "specgate_event_loop_tasks")
    with proc.oneshot():
        return {"t": round(time.time(), 1), "rss_mb": round(proc.memory_info().rss / 2**20, 2),
                "fds": proc.num_fds(), "tasks": tasks, "threads": proc.num_threads()}


async def poll_health(url: str, stop: asyncio.Event, out: list[float]) -> None:
    async with aiohttp.ClientSession() as s:
        while not stop.is_set():
            t0 = time.perf_counter()
            with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError):
                async with s.get(url + "/health", timeout=aiohttp.ClientTimeout(total=10)) as r:
                    await r.read()
                    out.append(time.perf_counter() - t0)
            await asyncio.sleep(0.05)


async def one_run(log_dir: Path, name: str, seconds: float, concurrency: int, attacks: list[str]) -> dict[str, Any]:
    async with emulated_pair(log_dir, name) as (base, spec):
        env = {**GATEWAY_ENV, "SPECGATE_BASELINE_URLS": base, "SPECGATE_SPECULATIVE_URLS": spec}
        async with gateway_process(env, log_dir / f"gateway-{name}.log") as url, aiohttp.ClientSession() as s:
            await wait_ready(url, 30)
            gw = _gateway_proc(url)
            await benign_load(url, 10.0, concurrency, Benign(), seed=99)  # warm-up, not counted
            await asyncio.sleep(2.0)
            samples = [await _sample(gw, s, url)]
            stop, tally = asyncio.Event(), Benign()
            health: list[float] = []
            outcomes: dict[str, dict[str, int]] = {}
            side = [asyncio.create_task(poll_health(url, stop, health))]
            if attacks:
                side.append(asyncio.create_task(hostile_client(url, stop, outcomes, attacks)))
            load = asyncio.create_task(benign_load(url, seconds, concurrency, tally, seed=1))
            while not load.done():
                await asyncio.wait({load}, timeout=max(seconds / 10, 1.0))
                samples.append(await _sample(gw, s, url))
            stop.set()
            await asyncio.gather(*side)
            await asyncio.sleep(3.0)  # let cancelled requests and closed connections settle
            samples.append(await _sample(gw, s, url))
            ejections = await _metric(s, url, "specgate_backend_ejections_total")
    lat = tally.latencies_s
    return {"run": name, "attacks_chosen": attacks, "seconds": seconds, "concurrency": concurrency,
            "benign_sent": tally.sent, "benign_ok": tally.ok, "benign_failures": tally.failures,
            "benign_success_rate": round(tally.ok / max(tally.sent, 1), 5),
            "benign_p50_s": round(_pct(lat, 50), 4), "benign_p99_s": round(_pct(lat, 99), 4),
            "ejections": ejections, "health_n": len(health),
            "health_p50_ms": round(_pct(health, 50) * 1000, 2),
            "health_p99_ms": round(_pct(health, 99) * 1000, 2),
            "health_max_ms": round(max(health, default=float("nan")) * 1000, 2),
            "attacks": outcomes, "samples": samples}


def _gateway_proc(url: str) -> psutil.Process:
    port = int(url.rsplit(":", 1)[1])
    for conn in psutil.net_connections(kind="tcp"):
        if conn.laddr and conn.laddr.port == port and conn.status == psutil.CONN_LISTEN and conn.pid:
            return psutil.Process(conn.pid)
    raise RuntimeError(f"no process listens on {port}")


async def hostile_comparison(log_dir: Path, seconds: float, concurrency: int,
                             attacks: list[str] | None = None) -> dict[str, Any]:
    control = await one_run(log_dir, "control", seconds, concurrency, [])
    _print(control)
    attacked = await one_run(log_dir, "hostile", seconds, concurrency, attacks or ALL_ATTACKS)
    _print(attacked)
    return {"control": control, "hostile": attacked, "cpus": os.cpu_count(),
            "p99_ratio": round(attacked["benign_p99_s"] / control["benign_p99_s"], 3),
            "gateway_env": GATEWAY_ENV}


def _print(r: dict[str, Any]) -> None:
    a, b = r["samples"][0], r["samples"][-1]
    print(f"{r['run']:<8} benign {r['benign_ok']}/{r['benign_sent']} p50 {r['benign_p50_s']}s p99 {r['benign_p99_s']}s "
          f"ejections {r['ejections']:.0f} /health p99 {r['health_p99_ms']} ms  rss {a['rss_mb']}->{b['rss_mb']} MB "
          f"fds {a['fds']}->{b['fds']} tasks {a['tasks']:.0f}->{b['tasks']:.0f}", flush=True)


def render_md(h: dict[str, Any]) -> list[str]:
    c, x = h["control"], h["hostile"]
    rows = [("benign requests (ok / sent)", f"{c['benign_ok']} / {c['benign_sent']}",
             f"{x['benign_ok']} / {x['benign_sent']}"),
            ("benign success rate", f"{c['benign_success_rate']:.2%}", f"{x['benign_success_rate']:.2%}"),
            ("benign p50 s", c["benign_p50_s"], x["benign_p50_s"]),
            ("benign p99 s", c["benign_p99_s"], x["benign_p99_s"]),
            ("ejections", f"{c['ejections']:.0f}", f"{x['ejections']:.0f}"),
            ("/health p50 / p99 / max ms", f"{c['health_p50_ms']} / {c['health_p99_ms']} / {c['health_max_ms']}",
             f"{x['health_p50_ms']} / {x['health_p99_ms']} / {x['health_max_ms']}")]
    for key, label in (("rss_mb", "RSS MB"), ("fds", "file descriptors"), ("tasks", "asyncio tasks")):
        rows.append((f"{label} start → end", f"{c['samples'][0][key]} → {c['samples'][-1][key]}",
                     f"{x['samples'][0][key]} → {x['samples'][-1][key]}"))
    lines = [f"## Hostile client mixed into benign load ({x['seconds']:.0f} s each run, "
             f"concurrency {x['concurrency']})",
             "", "Emulated pair (`specgate emulate`), gateway `python -m gateway serve` with "
             f"`{' '.join(f'{k}={v}' for k, v in h['gateway_env'].items())}`. Each run on fresh processes after a "
             "10 s benign warm-up.", "", "| | benign only | benign + hostile |", "|---|---:|---:|"]
    lines += [f"| {a} | {b} | {c_} |" for a, b, c_ in rows]
    lines += ["", f"p99 benign latency, hostile / control: **{h['p99_ratio']}**", "",
              "RSS over the hostile run (MB): " + ", ".join(str(s["rss_mb"]) for s in x["samples"]), "",
              "Hostile client outcomes (attack: answer → count):", ""]
    lines += [f"- {name}: {outcome}" for name, outcome in x["attacks"].items()]
    if sorted(x["attacks_chosen"]) != sorted(ALL_ATTACKS):
        lines += ["", "Attacks in this run: " + ", ".join(x["attacks_chosen"]) + " (not every attack)."]
    return [*lines, ""]
