"""Each shared GPU's step ratio, measured once at start-up while the GPU is still idle.

On a shared GPU one server carries the traffic at a time, so the idle one never runs a step alone, and its step at
batch 1 is borrowed from the serving one at the priors' ratio (`core.stepfit`, 1.5x by default). Where the real
ratio is lower the regime reads speculation dearer than it is and never tries it (family member 510: the n-gram
server 7% faster, adaptive 1.07x on the baseline throughout; at the emulated pair's own ratio it entered
speculation). A probe under traffic measures the ratio but co-runs with it: on a real H200 two such probes cost
the light phase 5% (`results/evidence-2026-12-06-j/`). Before the gateway is ready there is no traffic to co-run
with: each server of each shared GPU answers `SPECGATE_STARTUP_STEP_PROBES` short streamed completions, one
request on the GPU at a time, and every one but each server's first (warm-up: compiles, cold caches) is one quiet
step for the learner (`Learner.observe_quiet_step`). A server that is not idle (its scrape shows requests: a
restart under traffic) or does not answer is skipped; the priors' ratio then holds as before.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping

import aiohttp
import orjson

from gateway.backends import Backend, BackendPool
from gateway.core.learner import Learner
from gateway.logevents import log_event

log = logging.getLogger("specgate.quiet_steps")

# The answer runs ~20 decode steps whatever the model (counting is what every model does alike); greedy, so the
# same steps each time. `ignore_eos`: a model that stops early still runs `max_tokens` steps (vLLM's sampling field).
PROBE_BODY: Mapping[str, object] = {
    "prompt": "Count from one to thirty in words, separated by commas: one, two, three,",
    "max_tokens": 24, "temperature": 0.0, "stream": True, "ignore_eos": True,
}
HEALTHY_WAIT_S = 30.0  # how long the warm-up probes are retried while a server starts
PROBE_TIMEOUT_S = 10.0


def step_from_chunks(times: list[float]) -> float | None:
    """Mean seconds between a stream's token chunks (vLLM sends one chunk per engine step): the decode step."""
    if len(times) < 3:
        return None
    step = (times[-1] - times[0]) / (len(times) - 1)
    return step if step > 0 else None


def has_text(line: bytes) -> bool:
    """An SSE line of a completion chunk that carries text (not the last, empty one, a usage chunk or `[DONE]`)."""
    if not line.startswith(b"data:") or line[5:].strip() == b"[DONE]":
        return False
    try:
        chunk = orjson.loads(line[5:])
    except orjson.JSONDecodeError:
        return False
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    return isinstance(first, dict) and bool(first.get("text"))


async def probe_step(session: aiohttp.ClientSession, backend: Backend, headers: Mapping[str, str]) -> float | None:
    """One streamed completion to `backend`, alone on its GPU: its decode step in seconds, or None."""
    times: list[float] = []
    try:
        async with session.post(backend.url + "/v1/completions", json=dict(PROBE_BODY), headers=dict(headers),
                                timeout=aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)) as resp:
            if resp.status != 200:
                return None
            async for line in resp.content:
                if has_text(line):
                    times.append(time.monotonic())
    except (TimeoutError, aiohttp.ClientError, ValueError):
        return None
    return step_from_chunks(times)


async def measure_quiet_steps(pool: BackendPool, learner: Learner, session: aiohttp.ClientSession,
                              probes: int) -> int:
    """Probe every shared GPU's servers in turn (`probes` requests each, the first of each a warm-up) and teach the
    learner the quiet steps; returns how many it taught."""
    members = [b for group in pool.shared_groups() for b in pool.groups[group]]
    if probes < 2 or not members:
        return 0
    deadline = time.monotonic() + HEALTHY_WAIT_S
    warm = []
    for b in members:  # the warm-up probe, retried while the server starts
        while _idle(b) and time.monotonic() < deadline:  # idle before the first probe, or never probed
            if await probe_step(session, b, pool.auth_headers(b)) is not None:
                warm.append(b)
                break
            await asyncio.sleep(0.1)
    taught = 0
    for _ in range(probes - 1):
        for b in warm:
            step = await probe_step(session, b, pool.auth_headers(b))  # (its scrape now shows the probes)
            if step is not None:
                learner.observe_quiet_step(b.role, step)
                taught += 1
                log_event(log, logging.INFO, "quiet_step", backend=b.name, role=b.role, step_s=round(step, 6))
    return taught


def _idle(b: Backend) -> bool:
    """Nothing runs there that this gateway sent or the server's last scrape showed (another gateway's traffic)."""
    return not b.inflight and not b.scraped_load
