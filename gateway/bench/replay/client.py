"""Replay a workload through a gateway over real HTTP, streaming, and measure each request.

Each request is sent at its `t` (scaled by `time_scale` to wall time) with `x-request-id` = the item's id,
`stream: true` and `stream_options.include_usage`. Measured per request: TTFT (first chunk that carries
text), end-to-end time, completion tokens (from usage), engine steps (chunks that carry tokens, text or the
end of sequence: vLLM streams one chunk per engine step) and the gateway's routing headers. Times are wall
seconds here; the caller divides by `time_scale`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import aiohttp
import orjson

from gateway.workloads.items import WorkloadItem


@dataclass(slots=True)
class Measured:
    id: str
    kind: str | None
    sent_at_s: float  # wall seconds since the start of the replay
    lateness_s: float  # how late the send was against its schedule
    status: str = "error"
    backend: str | None = None
    cls: str | None = None
    reason: str | None = None
    ttft_s: float | None = None
    e2e_s: float | None = None
    completion_tokens: int | None = None
    engine_steps: int = 0
    error: str | None = None


def prepare_body(item: WorkloadItem, model: str) -> bytes:
    body: dict[str, Any] = dict(item.body)
    body["model"] = model
    body["stream"] = True
    options = dict(body.get("stream_options") or {})
    options["include_usage"] = True
    body["stream_options"] = options
    return orjson.dumps(body)


def _is_step(event: dict[str, Any]) -> bool:
    """A chunk that carries tokens of an engine step: text, or the end of sequence (empty text + finish_reason)."""
    for choice in event.get("choices") or ():
        if choice.get("finish_reason") is not None:
            return True
    return _has_text(event)


def _has_text(event: dict[str, Any]) -> bool:
    for choice in event.get("choices") or ():
        delta = choice.get("delta")
        if delta is not None and (delta.get("content") or delta.get("tool_calls") or delta.get("reasoning_content")):
            return True
        if choice.get("text"):
            return True
    return False


async def _consume(resp: aiohttp.ClientResponse, out: Measured, t0: float) -> None:
    buffer = b""
    async for chunk in resp.content.iter_any():
        buffer += chunk
        while b"\n\n" in buffer:
            raw, buffer = buffer.split(b"\n\n", 1)
            for line in raw.split(b"\n"):
                if not line.startswith(b"data:"):
                    continue
                data = line[5:].strip()
                if data == b"[DONE]":
                    continue
                event = orjson.loads(data)
                if "error" in event:
                    out.error = str(event["error"].get("message", event["error"]))[:200]
                    out.status = "stream_error"
                    return
                if _is_step(event):
                    out.engine_steps += 1
                    if out.ttft_s is None:
                        out.ttft_s = time.perf_counter() - t0
                usage = event.get("usage")
                if usage and usage.get("completion_tokens") is not None:
                    out.completion_tokens = int(usage["completion_tokens"])


async def send_one(session: aiohttp.ClientSession, url: str, item: WorkloadItem, body: bytes,
                   out: Measured, timeout_s: float) -> Measured:
    t0 = time.perf_counter()
    headers = {"content-type": "application/json", "x-request-id": item.id}
    try:
        async with asyncio.timeout(timeout_s), session.post(url + item.endpoint, data=body, headers=headers) as resp:
            out.backend = resp.headers.get("x-specgate-backend")
            out.cls = resp.headers.get("x-specgate-class")
            out.reason = resp.headers.get("x-specgate-reason")
            if resp.status != 200:
                out.status = str(resp.status)
                out.error = (await resp.text())[:200]
                return out
            out.status = "200"
            await _consume(resp, out, t0)
    except TimeoutError:
        out.status, out.error = "timeout", f"no answer within {timeout_s:.0f} s"
    except aiohttp.ClientError as exc:
        out.status, out.error = "error", f"{type(exc).__name__}: {exc}"[:200]
    out.e2e_s = time.perf_counter() - t0
    if out.status == "200" and out.completion_tokens is None:
        out.status, out.error = "incomplete", "stream ended without usage"
    return out


async def replay(
    items: Sequence[WorkloadItem],
    gateway_url: str,
    model: str,
    time_scale: float,
    on_done: Callable[[Measured], None] | None = None,
    timeout_s: float = 600.0,
    on_send: Callable[[str], None] | None = None,
    model_of: Mapping[str, str] | None = None,
) -> list[Measured]:
    """Send every item at `t * time_scale` wall seconds after the start; wait for all answers. `model_of`: the
    model to ask for by item id (a fleet serving several), `model` for the rest."""
    bodies = [prepare_body(item, model_of.get(item.id, model) if model_of else model) for item in items]
    connector = aiohttp.TCPConnector(limit=0, force_close=False)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None)) as session:
        start = time.perf_counter()

        async def run(item: WorkloadItem, body: bytes) -> Measured:
            due = item.t * time_scale
            delay = due - (time.perf_counter() - start)
            if delay > 0:
                await asyncio.sleep(delay)
            now = time.perf_counter() - start
            out = Measured(item.id, item.kind, sent_at_s=now, lateness_s=max(0.0, now - due))
            if on_send is not None:
                on_send(item.id)
            await send_one(session, gateway_url, item, body, out, timeout_s)
            if on_done is not None:
                on_done(out)
            return out

        return list(await asyncio.gather(*(run(i, b) for i, b in zip(items, bodies, strict=True))))
