"""One request's context as it goes through its attempts: what the proxy carries and the accounting reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aiohttp import web

from gateway.router import Routed


@dataclass(slots=True)
class Context:
    """Everything one request carries through its attempts."""

    request: web.Request
    endpoint: str
    t0: float
    request_id: str
    routed: Routed
    stream: bool
    strip_usage: bool
    payload: bytes
    headers: dict[str, str]
    first_byte_timeout_s: float
    attempts: int = 0
    overhead_recorded: bool = False
    movable: dict[str, Any] | None = None  # live migration: the parsed body of a stream that may move
