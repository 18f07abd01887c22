"""Every dashboard panel has data on a REAL Prometheus scraping a real gateway and the emulated pair.

A real `prometheus` (Debian package; required under CI=true) scrapes, every second, the gateway and
both emulated vLLM servers (each with its `role` label, as deploy/prometheus/prometheus.yml does).
Traffic through the gateway with the official `openai` SDK: chat and completions, streaming and not,
JSON mode, code, extraction, creative high temperature, a long prompt; one request the backend
rejects (400); and a speculative instance that is healthy but answers 503, so requests fail over to
the real one and it is ejected. Then every PromQL expression of every panel (variables set to All)
goes through /api/v1/query and must return at least one series.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import aiohttp
import pytest
import yaml
from openai import APIStatusError, AsyncOpenAI

from gateway.bench.kit.fake_vllm import FakeBackend
from gateway.bench.kit.inproc import start_gateway
from gateway.bench.kit.procs import free_port
from gateway.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
RATE_INTERVAL = "30s"
pytestmark = pytest.mark.timeout(120)


def require_prometheus() -> str:
    path = shutil.which("prometheus")
    if path is None:
        reason = "prometheus not installed (apt-get install -y prometheus)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return path


def hostport(url: str) -> str:
    return url.removeprefix("http://").rstrip("/")


def prometheus_config(gateway: str, baseline: str, speculative: str) -> dict[str, Any]:
    return {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "900ms"},
        "scrape_configs": [
            {"job_name": "specgate", "static_configs": [{"targets": [hostport(gateway)]}]},
            {"job_name": "vllm", "static_configs": [
                {"targets": [hostport(baseline)], "labels": {"role": "baseline"}},
                {"targets": [hostport(speculative)], "labels": {"role": "speculative"}},
            ]},
        ],
    }


def start_prometheus(binary: str, config: Path, data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={data}",
             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=1h"],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )


def tail(log: Path) -> str:
    return log.read_bytes()[-2000:].decode(errors="replace")


async def wait_scraping(session: aiohttp.ClientSession, url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    """Until Prometheus is ready and has scraped all three targets successfully."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"prometheus exited: {tail(log)}"
        with contextlib.suppress(aiohttp.ClientError, KeyError):
            async with session.get(url + "/api/v1/query", params={"query": "sum(up) == 3"}) as r:
                if r.status == 200 and (await r.json())["data"]["result"]:
                    return
        await asyncio.sleep(0.2)
    raise AssertionError(f"prometheus not scraping: {tail(log)}")


LONG_DOC = " ".join(f"Paragraph {i}: the quarterly ledger lists item {i} with cost {i * 7} units." for i in range(260))


def requests(model: str) -> list[tuple[str, dict[str, Any]]]:
    """(endpoint, kwargs) covering the classes and both endpoints, streaming and not."""
    out: list[tuple[str, dict[str, Any]]] = []
    for i in range(3):
        out += [
            ("chat", dict(messages=[{"role": "user", "content": f"Return a JSON object with name, age and city "
                                                               f"for person {i}."}],
                          response_format={"type": "json_object"}, temperature=0, max_tokens=48)),
            ("chat", dict(messages=[{"role": "user", "content": f"Write a Python function that returns the {i}th "
                                                               "Fibonacci number, with a unit test."}],
                          temperature=0.2, max_tokens=64)),
            ("chat", dict(messages=[{"role": "user", "content": f"Write a short poem about the sea, verse {i}."}],
                          temperature=1.2, max_tokens=48)),
            ("chat", dict(messages=[{"role": "user", "content": "Extract every cost from the following text: "
                                                               + LONG_DOC[:1500]}], temperature=0, max_tokens=48)),
            ("chat", dict(messages=[{"role": "user", "content": f"How are you today, friend {i}?"}], max_tokens=32)),
            ("completions", dict(prompt=f"def add_{i}(a, b):\n    return", temperature=0, max_tokens=32)),
            ("completions", dict(prompt=f"Once upon a time, story {i}:", temperature=1.0, max_tokens=40)),
        ]
    out.append(("chat", dict(messages=[{"role": "user", "content": "Summarize this document. " + LONG_DOC}],
                             temperature=0, max_tokens=24)))
    for _, kw in out:
        kw["model"] = model
    return out


async def one(client: AsyncOpenAI, endpoint: str, kwargs: dict[str, Any], stream: bool) -> None:
    api = client.chat.completions if endpoint == "chat" else client.completions
    if stream:
        s = await api.create(stream=True, stream_options={"include_usage": True}, **kwargs)
        async for _ in s:
            pass
    else:
        await api.create(**kwargs)


async def drive(client: AsyncOpenAI, model: str, waves: int, pause_s: float) -> None:
    sem = asyncio.Semaphore(6)

    async def bounded(endpoint: str, kwargs: dict[str, Any], stream: bool) -> None:
        async with sem:
            await one(client, endpoint, kwargs, stream)

    for wave in range(waves):
        reqs = requests(model)
        await asyncio.gather(*(bounded(e, kw, (i + wave) % 2 == 0) for i, (e, kw) in enumerate(reqs)))
        await asyncio.sleep(pause_s)


async def query(session: aiohttp.ClientSession, prom: str, expr: str) -> list[dict[str, Any]]:
    async with session.get(prom + "/api/v1/query", params={"query": expr}) as r:
        body = await r.json()
    assert body.get("status") == "success", f"{expr}: {body}"
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


async def test_every_dashboard_expression_returns_data_on_real_prometheus(
        tmp_path: Path, dashboard_build: ModuleType) -> None:
    from gateway.emulator import EmulatedPair

    binary = require_prometheus()
    build = dashboard_build
    targets = build.dashboard_targets(json.loads((ROOT / "dashboards" / "specgate.json").read_text()))
    # it lists the pair's model (the gateway sends a model's requests only to servers that list it)
    failing_spec = FakeBackend(mode="status", status=503, spec=True, aliases=("specgate-emu",))
    await failing_spec.start()
    proc: subprocess.Popen[bytes] | None = None
    gw = None
    log = tmp_path / "prometheus.log"
    try:
        async with EmulatedPair(profile="h200-ngram", time_scale=0.25) as pair:
            failing_spec.model = pair.model_name  # it serves the pair's model (the gateway routes by model)
            settings = Settings(
                baseline_urls=[pair.baseline_url],
                # the pair's own speculative server first, so it shares pair-0's GPU with the baseline (URLs pair
                # by position); the failing instance is then a speculative server with a GPU of its own, which the
                # policy picks whenever it predicts it faster, so requests reach it and fail over (listed first,
                # it joined the baseline's GPU and the baseline regime kept it idle in most runs on a busy machine)
                speculative_urls=[pair.speculative_url, failing_spec.url],
                # adaptive with generous exploration, so both backends (and the failing one) get traffic
                policy="adaptive", explore_rate=0.5, explore_max_regret=100.0, explore_max_output_tokens=1e9,
                explore_unmeasured_max_regret=100.0, explore_hope_sd=100.0, random_seed=3, health_interval_s=0.2,
                scrape_interval_s=0.5,
                backoff_base_s=0.001, eject_base_cooldown_s=0.5, log_requests=False,
            )
            gw = await start_gateway(settings)
            port = free_port()
            prom = f"http://127.0.0.1:{port}"
            config = tmp_path / "prometheus.yml"
            config.write_text(yaml.safe_dump(prometheus_config(gw.url, pair.baseline_url, pair.speculative_url)))
            proc = start_prometheus(binary, config, tmp_path / "data", port, log)
            client = AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0, timeout=60)
            async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
                await wait_scraping(session, prom, proc, log)
                # one request the backend rejects: more tokens than the context holds -> 400 passed through
                with pytest.raises(APIStatusError) as rejected:
                    await client.chat.completions.create(model=pair.model_name, max_tokens=10**6,
                                                         messages=[{"role": "user", "content": "hi"}])
                assert rejected.value.status_code == 400
                await drive(client, pair.model_name, waves=3, pause_s=1.5)
                for _ in range(3):  # which speculative instance a probe reaches depends on timing: a few more waves
                    if failing_spec.calls:  # (a fresh-clone run once tried the failing one in none of the first 3)
                        break
                    await drive(client, pair.model_name, waves=1, pause_s=0.5)
                assert failing_spec.calls > 0, "the failing speculative instance was never tried"
                await asyncio.sleep(4.0)  # a few more scrapes after the last request
                await client.close()

                up = await query(session, prom, "up")
                assert len(up) == 3 and all(s["value"][1] == "1" for s in up), up
                # the traffic really did what the panels are meant to show
                for check in ('sum(specgate_requests_total{role="baseline",status="200"}) > 0',
                              'sum(specgate_requests_total{role="speculative",status="200"}) > 0',
                              'sum(specgate_requests_total{status="400"}) > 0',
                              "sum(specgate_failovers_total) > 0",
                              "sum(specgate_backend_ejections_total) > 0",
                              "sum(vllm:spec_decode_num_draft_tokens_total) > 0",
                              "count(specgate_learned_tokens_per_step) > 0"):
                    assert await query(session, prom, check), check
                empty: list[str] = []
                nan_only: list[str] = []
                for title, expr in targets:
                    result = await query(session, prom, build.substitute(expr, RATE_INTERVAL))
                    if not result:
                        empty.append(f"[{title}] {expr}")
                    elif all(s["value"][1] == "NaN" for s in result):
                        nan_only.append(f"[{title}] {expr}")
                print(f"{len(targets)} expressions, {len(empty)} empty, {len(nan_only)} only NaN:",
                      *empty, *nan_only, sep="\n  ")
                assert not empty, f"{len(empty)} of {len(targets)} dashboard expressions returned no data:\n" + \
                    "\n".join(empty)
                # NaN = a series exists but nothing was observed in the window (0/0): a blank panel all the same
                assert not nan_only, f"{len(nan_only)} dashboard expressions returned only NaN:\n" + \
                    "\n".join(nan_only)
    finally:
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
        if gw is not None:
            await gw.runner.cleanup()
        await failing_spec.stop()
