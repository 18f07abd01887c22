"""`SPECGATE_WORKERS=2`: two processes on one port (SO_REUSEPORT), metrics merged across them."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path

import aiohttp
import pytest

from gateway.bench.kit.fake_vllm import FakePair
from gateway.bench.kit.procs import free_port

pytestmark = pytest.mark.asyncio


async def test_two_workers_share_a_port_and_merge_metrics(fakes: FakePair, tmp_path: Path) -> None:
    base, spec = fakes
    port = free_port()
    env = {**os.environ, "SPECGATE_WORKERS": "2", "SPECGATE_PORT": str(port), "SPECGATE_POLICY": "baseline",
           "SPECGATE_BASELINE_URLS": base.url, "SPECGATE_SPECULATIVE_URLS": spec.url,
           "PROMETHEUS_MULTIPROC_DIR": str(tmp_path), "SPECGATE_LOG_REQUESTS": "false"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "gateway", "serve", env=env,
                                                stderr=asyncio.subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as s:
            for _ in range(100):
                try:
                    async with s.get(url + "/ready") as r:
                        if r.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.1)
            n = 40
            async def one() -> None:
                async with aiohttp.ClientSession() as c, c.post(url + "/v1/completions",
                                                                json={"model": "m", "prompt": "x"}) as r:
                    assert r.status == 200
            await asyncio.gather(*(one() for _ in range(n)))
            totals: list[float] = []
            for _ in range(200):  # whichever worker answers, the count is the sum over both (flushed every 0.5 s)
                async with s.get(url + "/metrics") as r:
                    text = await r.text()
                found = re.findall(r'^specgate_requests_total\{[^}]*status="200"\} (\S+)$', text, re.M)
                totals.append(sum(float(v) for v in found))
                if len(totals) >= 4 and totals[-4:] == [float(n)] * 4:
                    break
                await asyncio.sleep(0.05)  # recorded just after each response went out
        assert totals[-4:] == [float(n)] * 4, totals
        assert len(set(base.headers[i].get("x-request-id") for i in range(n))) == n
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)
    assert proc.returncode == 0
