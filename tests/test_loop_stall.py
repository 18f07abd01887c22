"""A stall of the gateway's own event loop is not a backend's failure: the rule (`gateway.core.stall`) by table, the
lag monitor against a real synchronous stall, and the health checks against real loopback servers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from gateway.backends import SCRAPE_TIMEOUT_S
from gateway.bench.kit.fake_vllm import FakeBackend, started_pair
from gateway.bench.kit.inproc import until
from gateway.core.stall import STALLED_CHECKS_MAX, lag_reading, oversleep, stall_still_excuses, timeout_counts
from gateway.looplag import LoopLag
from gateway.state import AppState

CHAT = "/v1/chat/completions"
BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}
GUARD_S = 30.0  # a bound for conditions, generous: a health check that times out takes SCRAPE_TIMEOUT_S or more


def block_the_loop(seconds: float) -> None:
    """The fault under test: this thread, and so the event loop it runs, does not return until `seconds` of monotonic
    time have passed (polled against that deadline). A busy machine can only make the stall longer, which every
    assertion here allows (they bound the lag from below and the stall from above by nothing)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        threading.Event().wait(min(0.01, max(deadline - time.monotonic(), 0.0)))


@dataclass
class StallingBackend(FakeBackend):
    """A FakeBackend whose next `/health` request, once `stall_s` is set, blocks this process's whole event loop
    (the gateway's too) for `stall_s`, while the gateway's check of it is in flight; `completion_stall_s` the same
    for its next completion."""

    stall_s: float = 0.0
    completion_stall_s: float = 0.0
    every_health_stall_s: float = 0.0  # each `/health` hit blocks the loop this long: a loop that always lags
    health_hits: int = 0

    async def _completion(self, request: web.Request) -> web.StreamResponse:
        if self.completion_stall_s:
            stall, self.completion_stall_s = self.completion_stall_s, 0.0
            block_the_loop(stall)
        return await super()._completion(request)

    async def _health(self, request: web.Request) -> web.Response:
        self.health_hits += 1
        if self.stall_s:
            stall, self.stall_s = self.stall_s, 0.0
            block_the_loop(stall)
        block_the_loop(self.every_health_stall_s)
        return await super()._health(request)


@pytest.fixture
async def stalling() -> AsyncIterator[tuple[StallingBackend, StallingBackend]]:
    async with started_pair(StallingBackend) as pair:
        yield pair


async def chat(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as s, s.post(url + CHAT, json=BODY,
                                                    timeout=aiohttp.ClientTimeout(total=GUARD_S)) as r:
        await r.read()
        return r.status, r.headers.get("x-specgate-backend", "")


async def test_a_loop_stall_during_a_health_check_ejects_no_backend(gateway_factory: Any,
                                                                    stalling: tuple[StallingBackend, StallingBackend],
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """The defect: a stall of the loop longer than the health check's timeout, while a check was in flight, timed
    the check out and ejected a healthy backend (both, when both checks were in flight). Now the check's timeout is
    set against the loop's own lag over it: not counted, the check is tried again, and nothing is ejected."""
    caplog.set_level(logging.INFO, "specgate")
    base, spec = stalling
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               health_interval_s=0.05)
    pool = gw.app[AppState.key].pool
    await until(lambda: base.health_hits >= 2 and spec.health_hits >= 2, GUARD_S)
    base.stall_s = SCRAPE_TIMEOUT_S + 1.0
    await until(lambda: base.stall_s == 0.0, GUARD_S)  # the stall has happened (the hit that took it ran it whole)
    after = base.health_hits, spec.health_hits
    # two more checks of each backend: the one the stall hit (or its retry) has been decided
    await until(lambda: base.health_hits >= after[0] + 2 and spec.health_hits >= after[1] + 2, GUARD_S)
    assert [b.ejections for b in pool.backends] == [0, 0]
    assert all(b.routable(time.monotonic()) for b in pool.backends)
    assert await chat(gw.url) == (200, "baseline")
    assert "timeout_not_counted" in caplog.text


async def test_a_loop_stall_during_a_request_blames_no_backend(gateway_factory: Any,
                                                               stalling: tuple[StallingBackend, StallingBackend],
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """Passive ejection: a stall longer than a request's first-byte deadline timed the attempt out; the other
    backend then served the request, which blamed the first (ejected, with one failure allowed). Now the timeout is
    excused like a health check's: the request still goes to the other backend, and nobody is blamed."""
    caplog.set_level(logging.INFO, "specgate")
    base, spec = stalling
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               first_byte_timeout_s=1.0, nonstream_timeout_per_token_s=0.0,
                               eject_consecutive_failures=1, health_interval_s=3600.0)  # the request path alone
    pool = gw.app[AppState.key].pool
    base.completion_stall_s = 3.0
    assert await chat(gw.url) == (200, "speculative")  # the baseline's attempt timed out: the stall outlasted it
    assert base.completion_stall_s == 0.0 and base.calls == 1
    assert [b.ejections for b in pool.backends] == [0, 0] and pool.backends[0].consecutive_failures == 0
    assert '"what":"request"' in caplog.text
    assert await chat(gw.url) == (200, "baseline")


async def test_an_unresponsive_backend_is_still_ejected(gateway_factory: Any,
                                                        stalling: tuple[StallingBackend, StallingBackend]) -> None:
    """A backend that accepts connections and never answers times its checks out with the loop running: each such
    timeout counts, and the backend is ejected and stays out; requests go to the other one."""
    writers: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        with contextlib.suppress(ConnectionError):
            await reader.read(-1)  # until the gateway gives up and closes
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    try:
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        _, spec = stalling
        gw = await gateway_factory(baseline_urls=[url], speculative_urls=[spec.url], policy="baseline",
                                   health_interval_s=0.05)
        pool = gw.app[AppState.key].pool
        await until(lambda: pool.backends[0].ejections >= 1, GUARD_S)
        assert pool.backends[0].healthy is False and pool.backends[1].ejections == 0
        assert await chat(gw.url) == (200, "speculative")
    finally:
        server.close()
        for writer in writers:
            writer.transport.abort()


async def test_a_loop_that_always_lags_does_not_hide_a_hanging_backend(
        gateway_factory: Any, stalling: tuple[StallingBackend, StallingBackend],
        caplog: pytest.LogCaptureFixture) -> None:
    """The defect: with the loop stalled for most of every health check's span (a CPU-starved gateway), every timeout
    of a backend that never answers was excused, and it stayed in rotation for ever. Now, once its checks have been
    excused STALLED_CHECKS_MAX times in a row while the other backend answered its own checks through the same loop,
    its timeouts count: it is ejected, the other never is."""
    caplog.set_level(logging.INFO, "specgate")

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            await reader.read(-1)
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    _, spec = stalling
    gw = await gateway_factory(baseline_urls=[f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"],
                               speculative_urls=[spec.url], policy="baseline", health_interval_s=0.05)
    pool = gw.app[AppState.key].pool
    spec.every_health_stall_s = 0.8  # each of its checks (every 0.05 s) blocks the loop 0.8 s: most of any 2-s span
    try:
        await until(lambda: pool.backends[0].ejections >= 1, 60.0)
    finally:
        spec.every_health_stall_s = 0.0
        server.close()
    assert pool.backends[1].ejections == 0
    assert "timeout_not_counted" in caplog.text and "stall_not_excused" in caplog.text


# --------------------------------------------------------------------------- the rule, pure

@pytest.mark.parametrize(("in_a_row", "another_answers", "excused"), [
    (1, True, True), (STALLED_CHECKS_MAX - 1, True, True),  # a passing stall: the backend keeps its state
    (STALLED_CHECKS_MAX, True, False),  # it goes on while another backend answers: the backend's
    (STALLED_CHECKS_MAX + 5, False, True),  # nobody answers: the loop's
])
def test_stall_still_excuses(in_a_row: int, another_answers: bool, excused: bool) -> None:
    assert stall_still_excuses(in_a_row, another_answers) is excused


@pytest.mark.parametrize(("timeout_s", "elapsed_s", "lag_s", "counts"), [
    (2.0, 2.0, 0.0, True),     # the loop ran throughout: the backend's
    (2.0, 2.01, 0.3, True),    # small lag (jitter, a short burst): still the backend's
    (2.0, 2.0, 0.5, True),     # the loop ran for exactly 75% of it
    (2.0, 2.0, 0.51, False),   # less than that: the stall's
    (2.0, 5.0, 3.0, True),     # a 3 s stall after the backend had 2 s of a running loop: the backend's
    (2.0, 5.0, 3.2, True),     # a stall from 1.8 s in: 1.8 s of a running loop is enough
    (2.0, 5.0, 3.6, False),    # a stall from 1.4 s in: not enough, not counted
    (2.0, 3.0, 3.0, False),    # the loop did not run at all
])
def test_timeout_counts(timeout_s: float, elapsed_s: float, lag_s: float, counts: bool) -> None:
    assert timeout_counts(timeout_s, elapsed_s, lag_s) is counts


def test_lag_reading_adds_the_sleep_in_progress_and_never_goes_back() -> None:
    assert oversleep(0.1, 0.05) == 0.0 and oversleep(0.1, 0.35) == pytest.approx(0.25)
    assert lag_reading(1.0, asleep_since=10.0, tick_s=0.1, now=10.05) == 1.0  # inside its tick: no lag yet
    assert lag_reading(1.0, asleep_since=10.0, tick_s=0.1, now=13.1) == pytest.approx(4.0)  # a 3 s stall under way
    # the monitor wakes at 13.1 and records the 3 s: the reading is continuous across the wake
    assert lag_reading(4.0, asleep_since=13.1, tick_s=0.1, now=13.1) == pytest.approx(4.0)
    readings = [lag_reading(1.0, 10.0, 0.1, 10.0 + k * 0.07) for k in range(50)]
    assert readings == sorted(readings)


async def test_the_monitor_measures_a_synchronous_stall() -> None:
    """A 0.5 s stretch without the loop reads as at least 0.5 s less one tick of lag, whether or not the monitor
    has woken since (only lower bounds: a busy machine adds lag, never removes it)."""
    lag = LoopLag(tick_s=0.05)
    assert lag.reading() == 0.0
    task = asyncio.create_task(lag.run())
    try:
        await until(lambda: lag.running, GUARD_S)  # the monitor has started
        before = lag.reading()
        block_the_loop(0.5)
        assert lag.reading() - before >= 0.5 - lag.tick_s  # read before the monitor could wake
        read = lag.reading()
        await until(lambda: lag.recorded_s >= 0.5 - lag.tick_s, GUARD_S)  # the monitor wakes and records it
        assert lag.reading() >= read  # the reading did not drop when the stall moved into the record
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert lag.reading() >= 0.5 - lag.tick_s  # a stopped monitor keeps what it recorded
