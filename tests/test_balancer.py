"""Gateway replicas behind a real haproxy (Debian package; under CI=true its absence fails the test)."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from conftest import require_binary

from gateway.bench.balancer import gateway_replicas, haproxy_config
from gateway.emulator import EmulatedFleet

BODY = {"model": "specgate-emu", "messages": [{"role": "user", "content": "Return JSON with keys a, b."}],
        "max_tokens": 16, "temperature": 0}


def test_haproxy_config_lists_every_replica_with_a_ready_check() -> None:
    text = haproxy_config(8000, ["http://127.0.0.1:9001", "http://127.0.0.1:9002"])
    assert "server gw0 127.0.0.1:9001 check" in text and "server gw1 127.0.0.1:9002 check" in text
    assert "option httpchk GET /ready" in text and "balance leastconn" in text


@pytest.mark.asyncio
async def test_two_replicas_behind_haproxy_share_the_traffic(tmp_path: Path) -> None:
    require_binary("haproxy")
    async with EmulatedFleet(["baseline", "speculative"], time_scale=0.1) as fleet:
        env = {"SPECGATE_BACKENDS": fleet.backends_setting(), "SPECGATE_LOAD_SCRAPE_INTERVAL_S": "0.1"}
        async with gateway_replicas(env, 2, tmp_path, "t") as front, aiohttp.ClientSession() as s:
            for _ in range(12):
                async with s.post(front + "/v1/chat/completions", json=BODY) as r:
                    assert r.status == 200
                    assert r.headers["x-specgate-backend"] in ("baseline", "speculative")
    served = [sum('"event":"request"' in line for line in (tmp_path / f"gateway-t-r{i}.log").read_text().splitlines())
              for i in range(2)]
    assert sum(served) == 12 and min(served) >= 1, served
