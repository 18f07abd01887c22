"""What the gateway reads from a relayed SSE stream, without re-chunking or parsing every event.

Upstream bytes are relayed as they arrive. The tap counts events by their `data:` lines and recognises the
`data: [DONE]` event, both only at the start of a line: a JSON payload cannot hold a raw newline (it is
escaped), so text the model generates ("data: " or "data: [DONE]" in its output) never looks like a line
start. It takes `completion_tokens` from the usage it sees with one regex and, when the gateway itself
asked for `include_usage` (to learn acceptance) but the client did not, removes the usage-only event. Only
then does it frame events, holding back the incomplete event in a growing buffer that is searched only
where it grew (a 32 MB event costs linear time, not quadratic).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

COMPLETION_TOKENS = re.compile(rb'"completion_tokens"\s*:\s*(\d+)')
_USAGE_ONLY = re.compile(rb'"choices"\s*:\s*\[\s*\]')
_DATA_LINE = re.compile(rb"(?:^|\n)data:")
_DONE_LINE = re.compile(rb"(?:^|\n)data: ?\[DONE\]\r?(?:\n|$)")
_CARRY = 64  # bytes of the previous chunk kept to recognise a match split across chunks


@dataclass(slots=True)
class SseTap:
    strip_usage: bool
    chat: bool
    data_events: int = 0
    usage_events: int = 0
    done: bool = False
    completion_tokens: int | None = None
    _carry: bytes = b"\n"  # the stream starts at a line start
    _pending: bytearray = field(default_factory=bytearray)
    _searched: int = 0  # bytes of `_pending` known to hold no event end

    def feed(self, chunk: bytes) -> bytes:
        """Account for `chunk` and return the bytes to relay to the client (maybe `chunk` itself)."""
        if self.strip_usage:
            return self._feed_framed(chunk)
        self._account(chunk)
        return chunk

    def flush(self) -> bytes:
        rest = bytes(self._pending)
        self._pending.clear()
        self._searched = 0
        if rest:
            self._account(rest)
        return rest

    def _count(self, data: bytes, usage: bool = False) -> None:
        """Count `data:` line starts and a `[DONE]` event in `data` (and with `usage`, usage-only events and
        `completion_tokens`), each match once even when a chunk boundary splits it."""
        window = self._carry + data
        skip = len(self._carry)  # matches must end inside the new bytes
        self.data_events += sum(1 for m in _DATA_LINE.finditer(window) if m.end() > skip)
        if not self.done and any(m.end() > skip for m in _DONE_LINE.finditer(window)):
            self.done = True
        if usage:
            if b"completion_tokens" in window:
                found = [m for m in COMPLETION_TOKENS.finditer(window) if m.end() > skip]
                if found:
                    self.completion_tokens = int(found[-1].group(1))
            if b"[" in window:  # a usage-only event is the one with no choices
                self.usage_events += sum(1 for m in _USAGE_ONLY.finditer(window) if m.end() > skip)
        self._carry = window[-_CARRY:]

    def _account(self, data: bytes) -> None:
        self._count(data, usage=True)

    def _feed_framed(self, chunk: bytes) -> bytes:
        if not self._pending and chunk.endswith(b"\n\n") and b'"usage"' not in chunk:
            self._count(chunk)  # the common case: whole events, nothing to strip, no copy
            return chunk
        self._pending += chunk
        end = self._pending.rfind(b"\n\n", max(self._searched - 1, 0))
        if end < 0:
            self._searched = len(self._pending)
            return b""
        complete = bytes(self._pending[: end + 2])
        del self._pending[: end + 2]
        self._searched = 0
        if b'"usage"' not in complete:
            self._count(complete)
            return complete
        kept = []
        for event in complete.split(b"\n\n")[:-1]:
            if b'"usage"' in event and _USAGE_ONLY.search(event):
                found = COMPLETION_TOKENS.findall(event)
                if found:
                    self.completion_tokens = int(found[-1])
                self._count(event + b"\n\n")  # counted like any event, then dropped
                self.usage_events += 1
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
