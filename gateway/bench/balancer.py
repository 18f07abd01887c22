"""N gateway processes behind a real load balancer (haproxy from Debian), as replicas run in production.

`gateway_replicas(env, n, work_dir)` starts `n` `python -m gateway serve` processes with the same settings
and one haproxy in front of them (least connections, health checks on `/ready`, streaming-friendly
timeouts), yields the front URL, and stops everything (haproxy, then SIGTERM to each gateway, which drains).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from gateway.bench.procs import free_port, gateway_process, wait_ready


def haproxy_config(front_port: int, backends: list[str], host: str = "127.0.0.1") -> str:
    servers = "\n".join(f"    server gw{i} {url.removeprefix('http://')} check inter 500ms fall 2 rise 1"
                        for i, url in enumerate(backends))
    return f"""global
    maxconn 4096

defaults
    mode http
    timeout connect 2s
    timeout client 15m
    timeout server 15m
    timeout http-request 10s
    option http-buffer-request

frontend specgate
    bind {host}:{front_port}
    default_backend gateways

backend gateways
    balance leastconn
    option httpchk GET /ready
{servers}
"""


def haproxy_binary() -> str:
    path = shutil.which("haproxy")
    if path is None:
        raise RuntimeError("haproxy is not installed (Debian: apt-get install haproxy)")
    return path


@contextlib.asynccontextmanager
async def haproxy(backends: list[str], work_dir: Path, host: str = "127.0.0.1") -> AsyncIterator[str]:
    port = free_port(host)
    config = work_dir / "haproxy.cfg"
    config.write_text(haproxy_config(port, backends, host))
    log = (work_dir / "haproxy.log").open("wb")
    proc = await asyncio.create_subprocess_exec(haproxy_binary(), "-db", "-f", str(config), stdout=log, stderr=log)
    url = f"http://{host}:{port}"
    try:
        await wait_ready(url, 20.0, proc)
        yield url
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        log.close()


@contextlib.asynccontextmanager
async def gateway_replicas(env: Mapping[str, str], n: int, work_dir: Path, tag: str) -> AsyncIterator[str]:
    """`n` gateways behind haproxy; with `n == 1`, the one gateway itself (no balancer in the way)."""
    async with contextlib.AsyncExitStack() as stack:
        urls = [await stack.enter_async_context(gateway_process(env, work_dir / f"gateway-{tag}-r{i}.log"))
                for i in range(n)]
        if n == 1:
            yield urls[0]
            return
        yield await stack.enter_async_context(haproxy(urls, work_dir))
