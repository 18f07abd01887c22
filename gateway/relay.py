"""Relaying an upstream SSE stream to the client, and the timeouts of an attempt.

The idle limit is a delay moved forward as chunks arrive (it covers the client write and the next read; it is
moved once an eighth of it has passed, so a stall is detected 7/8 to 1 times the limit after the last chunk);
a timeout that is not ours is the upstream client's total timeout and is reported as such. A client that stops
reading while we write is `client_stalled`: the connection is closed, the upstream with it.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Protocol

import aiohttp
from aiohttp import web

from gateway.core.protocol import RequestView, error_body
from gateway.metrics import BatchedObservations
from gateway.settings import Settings
from gateway.streaming import SseTap

TOTAL_TIMEOUT = "upstream stream exceeded the total timeout"
RESCHEDULE_FRACTION = 8  # a stalled stream is detected between (1 - 1/8) x and 1 x the idle limit after its last chunk


@dataclass(slots=True)
class Outcome:
    """How one attempt ended, for metrics, the learner and the access log."""

    status: str
    ttft_s: float | None = None
    completion_tokens: int | None = None
    steps: int | None = None
    sent_so_far: tuple[int, int] | None = None  # `BackendPool.sent_so_far` when it was sent
    gpu_prompts_at_first: tuple[int, int] | None = None  # `BackendPool.gpu_prompts` when the first chunk came
    moves: tuple[str, ...] = ()  # live migration: the roles the request moved to, in order
    moved_why: str | None = None  # a mid-stream move's reason (`gateway.core.midstream.MidstreamCall.reason`)
    drafted_part: tuple[int, int] | None = None  # ... and the tokens and engine steps it made before it moved
    read_early: tuple[int, int] | None = None  # the tokens and engine steps read for acceptance while it ran
    tokens_by_role: tuple[tuple[str, int], ...] = ()  # a moved request: each part's role and completion tokens
    captured: bytes | bytearray | None = None  # shadow lookup: the response's bytes to replay (`gateway.shadow`)
    shadow_tps: float | None = None  # ... and what the replay read


class Sink(Protocol):
    """Where `pump` sends each upstream chunk: a `Relay`, or the migration's joiner (`gateway.join_relay.JoinRelay`,
    not a subclass: an interpreted class cannot inherit from this module's compiled one)."""

    async def send(self, chunk: bytes) -> None: ...


class Relay:
    """The client side of a stream: what the tap lets through, and the last bytes written."""

    def __init__(self, out: web.StreamResponse, tap: SseTap) -> None:
        self.out, self.tap = out, tap
        self.last_out = b"\n\n"

    async def send(self, chunk: bytes) -> None:
        data = self.tap.feed(chunk)
        if data:
            await self.out.write(data)
            self.last_out = data

    async def error(self, message: str, outcome: Outcome) -> None:
        outcome.status = "upstream_error"
        payload = error_body(message, "server_error", None, "upstream_stream_error")
        separator = b"" if self.last_out.endswith(b"\n\n") else b"\n\n"  # never glue it to a partial event
        await self.out.write(separator + b"data: " + payload + b"\n\n")


def close_client(request: web.Request) -> None:
    if request.transport is not None:
        request.transport.close()


def first_byte_timeout(s: Settings, view: RequestView) -> float:
    """Streams: the first byte. Non-streamed answers arrive whole, so their limit grows with max_tokens."""
    if view.stream:
        return s.first_byte_timeout_s
    if view.max_tokens is None:
        return s.total_timeout_s
    return min(s.first_byte_timeout_s + s.nonstream_timeout_per_token_s * view.max_tokens, s.total_timeout_s)


async def pump(resp: aiohttp.ClientResponse, relay: Sink, first: bytes, idle: float,
               gap: BatchedObservations) -> str | None:
    """Relay chunks until the upstream ends; the error that ended it, if any (`client_stalled` when the
    client stopped reading). `idle` bounds each gap; the client's total timeout bounds the whole."""
    loop = asyncio.get_running_loop()
    last = time.perf_counter()
    slack = idle / RESCHEDULE_FRACTION
    armed = loop.time()
    writing = True  # which side a timeout blames: the upstream read or the client write
    try:
        async with asyncio.timeout(idle) as deadline:
            await relay.send(first)
            writing = False
            read = resp.content.readany
            while chunk := await read():
                now = time.perf_counter()
                gap.observe(now - last)
                last = now
                # the deadline covers the write, then the next read; moved only once `slack` has passed since
                # it was set (a chunk every few ms would otherwise replace a timer per chunk)
                if (t := loop.time()) - armed > slack:
                    deadline.reschedule(t + idle)
                    armed = t
                writing = True
                await relay.send(chunk)  # back-pressure: a slow client slows our reads, never buffers
                writing = False
    except TimeoutError:
        if not deadline.expired():
            return TOTAL_TIMEOUT
        return "client_stalled" if writing else "upstream stream idle timeout"
    except (aiohttp.ClientError, OSError) as exc:
        return f"upstream stream broke: {type(exc).__name__}"
    return None

