"""N gateway processes behind a real load balancer (Debian's haproxy), for benchmarks and tests.

`async with gateway_fleet(env, work_dir, "adaptive", replicas=2) as fleet:` starts two
`python -m gateway serve` processes (`procs.gateway_process`) and one haproxy in front of them, with a
generated config in `work_dir`: HTTP mode, `leastconn` (or `roundrobin`) over the 127.0.0.1 ports, a health
check on each replica's `/ready` (a draining replica turns 503 there and leaves the rotation), and L7 retries
of a request a replica refused (503 while draining, connection refused while restarting) on another
replica. `fleet.url` is the front URL; `fleet.replicas` the replicas' own URLs and logs. With one replica no
balancer runs: `fleet.url` is the gateway itself, as `specgate bench` always did.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import shutil
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from gateway.bench.kit.procs import fetch_text, free_port, gateway_process, stop_process, wait_ready

ALGORITHMS = ("leastconn", "roundrobin")
WARM_STARTS = ("none", "file", "peers")
HAPROXY_MISSING = "haproxy is not installed (Debian: apt-get install -y haproxy)"


@dataclass(slots=True)
class Replica:
    url: str
    log_path: Path
    port: int
    stack: contextlib.AsyncExitStack
    restarts: int = 0


@dataclass(slots=True)
class Fleet:
    """What `gateway_fleet` yields: the front URL and the replicas (restartable one at a time)."""

    url: str
    env: Mapping[str, str]
    replicas: list[Replica] = field(default_factory=list)
    balancer: Balancer | None = None
    warm: str = "none"  # how a restarted replica gets learned state back: none | file | peers

    async def restart(self, index: int) -> None:
        """Stop replica `index` as a rolling deploy does (SIGTERM: drain, exit) and start a new process on the
        same port; returns when the new one is ready and the balancer sends it traffic again (as Kubernetes
        waits for a new pod's readiness before it stops the next one)."""
        old = self.replicas[index]
        await old.stack.aclose()
        env = _replica_env(self.env, self.warm, old.log_path)
        if self.warm == "peers":
            env["SPECGATE_PEERS"] = ",".join(r.url for i, r in enumerate(self.replicas) if i != index)
        self.replicas[index] = await _start_replica(env, old.log_path, old.port, old.restarts + 1)
        if self.balancer is not None:
            await self.balancer.wait_up(f"g{index}")

    def log_paths(self) -> list[Path]:
        """Every replica's log, restarted processes included."""
        paths = []
        for r in self.replicas:
            paths += [r.log_path, *sorted(r.log_path.parent.glob(r.log_path.stem + ".restart*.log"))]
        return paths


def _replica_env(env: Mapping[str, str], warm: str, log_path: Path) -> dict[str, str]:
    out = dict(env)
    if warm == "file":  # each replica its own file, as a pod with its own volume would have
        out["SPECGATE_STATE_FILE"] = str(log_path.with_suffix(".state.json"))
        out.setdefault("SPECGATE_STATE_INTERVAL_S", "5")
    return out


async def _start_replica(env: Mapping[str, str], log_path: Path, port: int, restarts: int = 0) -> Replica:
    stack = contextlib.AsyncExitStack()
    this_log = log_path if not restarts else log_path.with_name(f"{log_path.stem}.restart{restarts}.log")
    try:
        url = await stack.enter_async_context(gateway_process(env, this_log, port=port))
    except BaseException:
        await stack.aclose()
        raise
    return Replica(url, log_path, port, stack, restarts)


def haproxy_binary() -> str | None:
    return shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if Path(p).exists()), None)


def haproxy_config(front_port: int, servers: Sequence[str], algorithm: str = "leastconn",
                   check_interval_ms: int = 250, timeout_s: float = 900.0, stats_port: int | None = None) -> str:
    """An haproxy.cfg: one frontend on 127.0.0.1:`front_port`, one backend with `servers` (host:port), and
    the stats page (CSV at /stats;csv) on `stats_port`."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"balance algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}")
    lines = [
        "global",
        "    maxconn 4096",
        "    tune.bufsize 65536",  # L7 retries replay the buffered request: let typical bodies fit
        "    log stderr format raw local0 info",  # state changes and errors only, not a line per request
        "defaults",
        "    mode http",
        "    log global", "    option httplog",
        "    option http-keep-alive",
        "    option http-buffer-request",  # an L7 retry needs the whole request, body included, in the buffer
        "    timeout connect 2s",
        f"    timeout client {int(timeout_s)}s",
        f"    timeout server {int(timeout_s)}s",
        "    timeout http-request 30s",
        "    retries 3",
        "    option redispatch 1",
        "    retry-on conn-failure empty-response 503",
        "frontend specgate",
        f"    bind 127.0.0.1:{front_port}",
        "    default_backend gateways",
        "backend gateways",
        f"    balance {algorithm}",
        "    option httpchk GET /ready",
        "    http-check expect status 200",
        # a 5xx in traffic (a draining replica's 503) takes the replica out at once, not at the next check;
        # the check on /ready brings it back
        f"    default-server inter {check_interval_ms}ms fastinter {check_interval_ms}ms fall 1 rise 1"
        " observe layer7 error-limit 1 on-error mark-down",
    ]
    lines += [f"    server g{i} {server} check" for i, server in enumerate(servers)]
    if stats_port is not None:
        lines += ["listen stats", f"    bind 127.0.0.1:{stats_port}", "    stats enable", "    stats uri /stats"]
    return "\n".join(lines) + "\n"


@dataclass(slots=True)
class Balancer:
    url: str
    config: Path
    stats_url: str

    async def server_stats(self) -> list[dict[str, str]]:
        """One row per replica from haproxy's CSV stats (svname g0.., status UP/DOWN, stot = sessions, ...)."""
        text = await fetch_text(self.stats_url + ";csv")
        rows = csv.DictReader(io.StringIO(text.removeprefix("# ")))
        return [row for row in rows if row["pxname"] == "gateways" and row["svname"] not in ("FRONTEND", "BACKEND")]

    async def wait_up(self, server: str, timeout_s: float = 10.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(r["svname"] == server and r["status"].startswith("UP") for r in await self.server_stats()):
                return
            await asyncio.sleep(0.05)
        raise TimeoutError(f"haproxy did not see {server} up within {timeout_s:.0f} s")


@contextlib.asynccontextmanager
async def haproxy(servers: Sequence[str], work_dir: Path, algorithm: str = "leastconn",
                  ready_timeout_s: float = 30.0) -> AsyncIterator[Balancer]:
    """Run haproxy in the foreground in front of `servers` (host:port) until the context exits."""
    binary = haproxy_binary()
    if binary is None:
        raise RuntimeError(HAPROXY_MISSING)
    port, stats_port = free_port(), free_port()
    config = work_dir / f"haproxy-{port}.cfg"
    config.write_text(haproxy_config(port, servers, algorithm, stats_port=stats_port))
    check = await asyncio.create_subprocess_exec(binary, "-c", "-q", "-f", str(config),
                                                 stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    out, _ = await check.communicate()
    if check.returncode != 0:
        raise RuntimeError(f"haproxy rejected {config}: {out.decode(errors='replace')}")
    url = f"http://127.0.0.1:{port}"
    with (work_dir / f"haproxy-{port}.log").open("wb") as log:
        proc = await asyncio.create_subprocess_exec(binary, "-db", "-f", str(config), stdout=log, stderr=log,
                                                    start_new_session=True)
        try:
            await wait_ready(url, ready_timeout_s, proc)
            balancer = Balancer(url, config, f"http://127.0.0.1:{stats_port}/stats")
            for i in range(len(servers)):
                await balancer.wait_up(f"g{i}", ready_timeout_s)
            yield balancer
        finally:
            await stop_process(proc)


@contextlib.asynccontextmanager
async def gateway_fleet(env: Mapping[str, str], work_dir: Path, tag: str, replicas: int = 1,
                        algorithm: str = "leastconn", warm: str = "none") -> AsyncIterator[Fleet]:
    """`replicas` gateway processes with `env`; behind haproxy when more than one. `warm`: what a restarted
    replica starts from: its priors (none), its own state file (file), or the running replicas (peers)."""
    if replicas < 1:
        raise ValueError("replicas must be >= 1")
    if warm not in WARM_STARTS:
        raise ValueError(f"warm must be one of {', '.join(WARM_STARTS)}")
    fleet = Fleet("", env, warm=warm)
    try:
        for i in range(replicas):
            log_path = work_dir / (f"gateway-{tag}.log" if replicas == 1 else f"gateway-{tag}-r{i}.log")
            fleet.replicas.append(await _start_replica(_replica_env(env, warm, log_path), log_path, free_port()))
        if replicas == 1:
            fleet.url = fleet.replicas[0].url
            yield fleet
            return
        async with haproxy([r.url.removeprefix("http://") for r in fleet.replicas], work_dir, algorithm) as lb:
            fleet.url, fleet.balancer = lb.url, lb
            yield fleet
    finally:
        for replica in fleet.replicas:
            await replica.stack.aclose()
