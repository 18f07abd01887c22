"""Closed-loop load that sorts every request into one outcome (completed, failed over, cut, failed, left)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from gateway.bench.faults.backend import CHAT, MODEL, answer_failure


@dataclass
class Tally:
    sent: int = 0
    completed: int = 0
    failed_over: int = 0
    cut_mid_stream: int = 0
    failed: int = 0
    client_aborted: int = 0
    failed_statuses: dict[str, int] = field(default_factory=dict)

    def fail(self, why: str) -> None:
        self.failed += 1
        self.failed_statuses[why] = self.failed_statuses.get(why, 0) + 1


def request_body(stream: bool) -> dict[str, Any]:
    return {"model": MODEL, "messages": [{"role": "user", "content": "Summarize the fault report."}],
            "max_tokens": 8, "stream": stream}


async def one_request(session: aiohttp.ClientSession, url: str, stream: bool, tally: Tally,
                      leave: str | None = None) -> None:
    """One request; `leave` = before_first_token | mid_stream | unary makes the client go away early."""
    tally.sent += 1
    try:
        async with session.post(url + CHAT, json=request_body(stream), timeout=aiohttp.ClientTimeout(total=30)) as r:
            if leave == "mid_stream":
                await r.content.readuntil(b"\n\n")
                tally.client_aborted += 1
                r.close()
                return
            data = b""
            try:
                async for chunk in r.content.iter_any():
                    data += chunk
            except aiohttp.ClientPayloadError:
                if r.status == 200 and stream and b'"error"' in data:
                    tally.cut_mid_stream += 1
                else:
                    tally.fail(f"{r.status} broken")
                return
            failure = answer_failure(r.status, data, stream)
            if failure is not None:
                tally.fail("200 incomplete" if failure == "incomplete" else failure)
                return
            tally.completed += 1
            if r.headers.get("x-specgate-reason", "").startswith("failover"):
                tally.failed_over += 1
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        tally.fail(type(exc).__name__)


async def early_leaver(session: aiohttp.ClientSession, url: str, leave: str, tally: Tally,
                       after_s: float) -> None:
    """Leave before the first token / during a unary request: cancel the request after `after_s`."""
    task = asyncio.create_task(one_request(session, url, leave == "before_first_token", tally, leave))
    await asyncio.sleep(after_s)
    if not task.done():
        task.cancel()
        tally.client_aborted += 1
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def closed_loop(url: str, seconds: float, concurrency: int, tally: Tally, stream_share: float = 0.5,
                      leave_share: float = 0.0, seed: int = 0) -> None:
    rng = random.Random(seed)
    deadline = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def client() -> None:
            while time.monotonic() < deadline:
                stream = rng.random() < stream_share
                if rng.random() < leave_share:
                    leave = rng.choice(["before_first_token", "mid_stream", "unary"])
                    if leave == "mid_stream":
                        await one_request(session, url, True, tally, leave)
                    else:
                        await early_leaver(session, url, leave, tally, 0.05)
                else:
                    await one_request(session, url, stream, tally)

        await asyncio.gather(*(client() for _ in range(concurrency)))
