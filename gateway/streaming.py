"""What the gateway reads from a relayed SSE stream, without re-chunking or parsing every event.

Upstream bytes are relayed as they arrive. The tap counts `data:` events with `bytes.count`, takes
`completion_tokens` from any usage it sees with one regex, and, when the gateway itself asked for
`include_usage` (to learn acceptance) but the client did not, removes the usage-only event. Only then
does it frame events, holding back at most one incomplete event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

COMPLETION_TOKENS = re.compile(rb'"completion_tokens"\s*:\s*(\d+)')
_USAGE_ONLY = re.compile(rb'"choices"\s*:\s*\[\s*\]')
_DATA = b"data: "
_DONE = b"data: [DONE]"


@dataclass(slots=True)
class SseTap:
    strip_usage: bool
    chat: bool
    data_events: int = 0
    usage_events: int = 0
    done: bool = False
    completion_tokens: int | None = None
    _pending: bytes = b""

    def feed(self, chunk: bytes) -> bytes:
        """Account for `chunk` and return the bytes to relay to the client (maybe `chunk` itself)."""
        if self.strip_usage:
            return self._feed_framed(chunk)
        self._account(chunk)
        return chunk

    def flush(self) -> bytes:
        rest, self._pending = self._pending, b""
        if rest:
            self._account(rest)
        return rest

    def _count(self, data: bytes) -> None:
        self.data_events += data.count(_DATA)
        if _DONE in data:
            self.done = True

    def _account(self, data: bytes) -> None:
        self._count(data)
        if b'"usage"' in data:
            found = COMPLETION_TOKENS.findall(data)
            if found:
                self.completion_tokens = int(found[-1])
            self.usage_events += len(_USAGE_ONLY.findall(data))

    def _feed_framed(self, chunk: bytes) -> bytes:
        if not self._pending and chunk.endswith(b"\n\n") and b'"usage"' not in chunk:
            self._count(chunk)  # the common case: whole events, nothing to strip, no copy
            return chunk
        data = self._pending + chunk if self._pending else chunk
        end = data.rfind(b"\n\n")
        if end < 0:
            self._pending = data
            return b""
        complete, self._pending = data[: end + 2], data[end + 2 :]
        if b'"usage"' not in complete:
            self._count(complete)
            return complete
        kept = []
        for event in complete.split(b"\n\n")[:-1]:
            if b'"usage"' in event and _USAGE_ONLY.search(event):
                found = COMPLETION_TOKENS.findall(event)
                if found:
                    self.completion_tokens = int(found[-1])
                continue
            kept.append(event + b"\n\n")
        out = b"".join(kept)
        self._account(out)
        return out

    @property
    def engine_steps(self) -> int:
        """Content chunks: each vLLM chunk carries one engine step's tokens (chat adds a role-only chunk)."""
        steps = self.data_events - self.usage_events - (1 if self.done else 0) - (1 if self.chat else 0)
        return max(steps, 0)
