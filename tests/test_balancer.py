"""Two gateway processes behind a real haproxy in front of the emulated pair (gateway/bench/fleet/balancer.py)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable
from pathlib import Path

import aiohttp
import pytest
from openai import AsyncOpenAI

from gateway.bench.fleet.balancer import Fleet, gateway_fleet, haproxy_config
from gateway.bench.kit.inproc import until
from gateway.emulator import EmulatedPair

MODEL = "specgate-emu"


def test_config_names_every_replica_and_checks_ready() -> None:
    cfg = haproxy_config(9000, ["127.0.0.1:9001", "127.0.0.1:9002"], "roundrobin")
    assert "bind 127.0.0.1:9000" in cfg and "balance roundrobin" in cfg
    assert re.findall(r"server g\d 127\.0\.0\.1:(\d+) check", cfg) == ["9001", "9002"]
    assert "option httpchk GET /ready" in cfg and "retry-on conn-failure empty-response 503" in cfg
    with pytest.raises(ValueError, match="balance algorithm"):
        haproxy_config(9000, ["127.0.0.1:9001"], "random; evil")


async def _served(fleet: Fleet) -> list[float]:
    """Requests each replica answered with 200, from its own /metrics."""
    out = []
    async with aiohttp.ClientSession() as s:
        for r in fleet.replicas:
            async with s.get(r.url + "/metrics") as resp:
                text = await resp.text()
            out.append(sum(float(v) for v in re.findall(r'^specgate_requests_total\{[^}]*status="200"\} (\S+)$',
                                                          text, re.M)))
    return out


async def _one(client: AsyncOpenAI, i: int) -> str:
    if i % 2:
        stream = await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": f"Return JSON with keys id, n: item {i}"}],
            max_tokens=12, temperature=0, stream=True)
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
        assert text
        return "stream"
    raw = await client.chat.completions.with_raw_response.create(
        model=MODEL, messages=[{"role": "user", "content": f"Say hello number {i}"}], max_tokens=8)
    assert raw.headers["x-specgate-backend"] in ("baseline", "speculative")
    assert raw.parse().choices[0].message.content
    return raw.headers["x-specgate-backend"]


async def test_two_gateways_behind_haproxy_share_traffic_and_survive_a_rolling_restart(
        tmp_path: Path, require_binary: Callable[[str], str]) -> None:
    require_binary("haproxy")
    async with EmulatedPair(profile="h200-ngram", time_scale=0.05, model_name=MODEL) as pair:
        env = {"SPECGATE_BASELINE_URLS": pair.baseline_url, "SPECGATE_SPECULATIVE_URLS": pair.speculative_url,
               "SPECGATE_HEALTH_INTERVAL_S": "0.2", "SPECGATE_SCRAPE_INTERVAL_S": "0.2",
               "SPECGATE_DRAIN_TIMEOUT_S": "10", "SPECGATE_LOG_REQUESTS": "false"}
        async with gateway_fleet(env, tmp_path, "t", replicas=2) as fleet:
            assert fleet.balancer is not None and len(fleet.replicas) == 2
            client = AsyncOpenAI(base_url=fleet.url + "/v1", api_key="unused", max_retries=0)
            results = await asyncio.gather(*(_one(client, i) for i in range(24)))
            assert len(results) == 24
            served = await _served(fleet)
            assert sum(served) == 24 and min(served) > 0, served  # both replicas took traffic
            stats = await fleet.balancer.server_stats()
            assert [r["status"] for r in stats] == ["UP", "UP"]
            assert sum(int(r["stot"]) for r in stats) >= 2

            # rolling restart: each replica in turn is stopped (drain) and started again while traffic runs
            done = asyncio.Event()
            outcomes: list[str] = []

            async def traffic() -> None:
                i = 0
                while not done.is_set():
                    outcomes.append(await _one(client, i))
                    i += 1

            tasks = [asyncio.create_task(traffic()) for _ in range(3)]
            for index in range(2):  # each restart while requests are flowing: some completed since the last step
                seen = len(outcomes)
                await until(lambda seen=seen: len(outcomes) >= seen + 3)  # type: ignore[misc]
                await fleet.restart(index)
            seen = len(outcomes)
            await until(lambda: len(outcomes) >= seen + 3)
            done.set()
            await asyncio.gather(*tasks)  # any failed request raised from the SDK here
            assert len(outcomes) >= 6
            assert all(r.restarts == 1 for r in fleet.replicas)
            after = await asyncio.gather(*(_one(client, i) for i in range(8)))
            assert len(after) == 8
            assert min(await _served(fleet)) > 0  # the restarted processes serve again
            await client.close()


def test_bench_with_two_gateways_and_a_rolling_restart(tmp_path: Path, require_binary: Callable[[str], str]) -> None:
    require_binary("haproxy")
    from gateway.bench.kit.workload import tiny_workload
    from gateway.bench.replay.cli import bench_main

    workload = tmp_path / "tiny.jsonl"
    items = tiny_workload(workload)
    out = tmp_path / "results.json"
    rc = bench_main(["--workload", str(workload), "--policies", "baseline", "--out", str(out), "--time-scale", "0.25",
                     "--gateways", "2", "--rolling-restart", "--warm", "peers", "--request-timeout", "30"])
    assert rc == 0
    doc = json.loads(out.read_text())
    assert doc["gateways"] == 2 and doc["balance"] == "leastconn" and doc["rolling_restart"] is True
    result = doc["policies"]["baseline"]
    assert result["summary"]["requests"] == len(items) and result["summary"]["errors"] == 0
    (restarts,) = result["restarts"]
    assert [r["replica"] for r in restarts] == [0, 1] and all(r["ready_s"] > r["stop_s"] for r in restarts)
    (trace,) = result["true_load"]
    assert trace and max(row[1] + row[2] for row in trace) > 0  # the baseline really ran requests
    logs = sorted(p.name for p in (tmp_path / "results-logs").glob("gateway-*.log"))
    assert logs == ["gateway-baseline-r0.log", "gateway-baseline-r0.restart1.log", "gateway-baseline-r1.log",
                    "gateway-baseline-r1.restart1.log"]
    for restarted in ("r0", "r1"):  # each restarted replica warm-started from the other, running one
        text = (tmp_path / "results-logs" / f"gateway-baseline-{restarted}.restart1.log").read_text()
        assert '"state_loaded"' in text, text[:2000]  # the restarted replica warm-started
