"""The access log: one JSON line per request, encoded once and written in batches.

`specgate serve` attaches stderr: lines are buffered and written together (every 0.5 s, at 1,024 lines, and
before any other log line, so the order holds), each `{"time": ..., "level": "info", "event": "request", ...}`
like every other line. Without a stream (the app used as a library, tests) each line goes to the
`specgate.access` logger instead.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import BinaryIO

import orjson

log = logging.getLogger("specgate.access")
CAPACITY = 1024  # lines buffered before a write


class IsoTime:
    """UTC ISO 8601 with milliseconds; the date part formatted once per second."""

    def __init__(self) -> None:
        self._second = -1
        self._stamp = ""

    def __call__(self, created: float) -> str:
        seconds = int(created)
        if seconds != self._second:
            self._second = seconds
            self._stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        return f"{self._stamp}.{int((created - seconds) * 1000):03d}Z"


class AccessLog:
    def __init__(self) -> None:
        self._stream: BinaryIO | None = None
        self._lines: list[bytes] = []
        self._time = IsoTime()

    def attach(self, stream: BinaryIO) -> None:
        """Write batches to `stream` from now on (`specgate serve`: stderr)."""
        self._stream = stream

    def write(self, fields: Mapping[str, object]) -> None:
        body = orjson.dumps(fields)
        if self._stream is None:
            log.info(body.decode())
            return
        head = f'{{"time":"{self._time(time.time())}","level":"info",'.encode()
        self._lines.append(head + body[1:] if len(body) > 2 else head[:-1] + b"}")
        if len(self._lines) >= CAPACITY:
            self.flush()

    def flush(self) -> None:
        if not self._lines or self._stream is None:
            return
        lines, self._lines = self._lines, []
        self._stream.write(b"\n".join(lines) + b"\n")
        self._stream.flush()
