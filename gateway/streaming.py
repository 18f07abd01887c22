"""What the gateway reads from a relayed SSE stream: events framed by their blank line, never substrings.

Upstream bytes are relayed as they arrive. The tap splits the byte stream into events (`\\n\\n`) and
reads each event's `data:` lines: an event with data counts once, `[DONE]` is an event whose whole data
is `[DONE]`, and usage is read by parsing the event's JSON. Text inside generated content can contain
`data: ` or `data: [DONE]`: it sits inside a JSON string on a line that starts with `data:`, so it is
never mistaken for a field.

Work and memory per event are bounded: only the first `HEAD_BYTES` of an event are kept to read it (a
usage event is a few hundred bytes). When the gateway itself asked for `include_usage` but the client
did not, the usage-only event is removed; an event is held back until complete only while it could be
that event (≤ `HEAD_BYTES`); a larger event is relayed as it arrives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import orjson

COMPLETION_TOKENS = re.compile(rb'"completion_tokens"\s*:\s*(\d+)')
HEAD_BYTES = 64 * 1024


@dataclass(slots=True)
class SseTap:
    strip_usage: bool
    chat: bool
    data_events: int = 0
    usage_events: int = 0
    done: bool = False
    completion_tokens: int | None = None
    capture: bytearray | None = None  # shadow lookup: the stream's bytes (up to `capture_limit`) for a replay
    capture_limit: int = 0
    _head: bytearray = field(default_factory=bytearray)  # the current event's first HEAD_BYTES
    _over: bool = False  # the current event outgrew HEAD_BYTES: relayed as it comes, not read
    _last_nl: bool = False  # the current event's last byte so far is `\n`

    def feed(self, chunk: bytes) -> bytes:
        """Account for `chunk` and return the bytes to relay to the client (`chunk` itself unless stripping)."""
        if self.capture is not None and len(self.capture) < self.capture_limit:
            self.capture += chunk
        if not self._head and not self._over and chunk.endswith(b"\n\n") and self._plain_events(chunk):
            self._last_nl = False
            return chunk
        out: list[bytes] = []
        start = 0
        if self._last_nl and chunk[:1] == b"\n":  # the blank line that ends an event spans two chunks
            self._part(b"\n", True, out)
            start = 1
        if self._head or self._over:  # the event the last chunk left open ends first
            end = chunk.find(b"\n\n", start)
            stop = len(chunk) if end < 0 else end + 2
            self._part(chunk[start:stop], end >= 0, out)
            start = stop
        last = chunk.rfind(b"\n\n", start)
        if last >= start:
            self._whole_events(chunk[start:last + 2], out)
            start = last + 2
        if start < len(chunk):
            self._part(chunk[start:], False, out)
        self._last_nl = bool(self._head or self._over) and chunk.endswith(b"\n")
        if not self.strip_usage:
            return chunk
        return out[0] if len(out) == 1 else b"".join(out)

    def _whole_events(self, whole: bytes, out: list[bytes]) -> None:
        """Whole events: runs of plain ones counted in C, the usage and [DONE] events between them read one by one
        (a fast upstream's whole stream can arrive as one chunk)."""
        start = 0
        while start < len(whole):
            special = _first_special(whole, start)
            if special < 0:
                cut = len(whole)
            else:  # the special event starts after the blank line before it
                before = whole.rfind(b"\n\n", start, special)
                cut = start if before < 0 else before + 2
            if cut > start:
                if not self._plain_events(whole[start:cut]):
                    self._events(whole[start:], out)  # odd framing: the plain reading, event by event
                    return
                out.append(whole[start:cut])
            if special < 0:
                return
            end = whole.find(b"\n\n", special) + 2
            self._events(whole[cut:end], out)
            start = end

    def _events(self, whole: bytes, out: list[bytes]) -> None:
        start = 0
        while (end := whole.find(b"\n\n", start)) >= 0:
            self._part(whole[start:end + 2], True, out)
            start = end + 2

    def _plain_events(self, whole: bytes) -> bool:
        """Whole one-line events with no usage and no [DONE] (the common case), counted in C. A raw newline never
        occurs inside a JSON event, so `data:` after a blank line starts an event."""
        if b"[DONE]" in whole or b'"usage"' in whole:
            return False
        events = whole.count(b"\n\n")
        if whole.count(b"\n") != 2 * events:
            return False
        self.data_events += whole.startswith(b"data:") + whole.count(b"\n\ndata:")
        return True

    def flush(self) -> bytes:
        """End of stream: an unterminated last event is read and relayed as it is."""
        if not self._head:
            return b""
        out: list[bytes] = []
        self._finish(out)
        return b"".join(out) if self.strip_usage else b""

    def _part(self, part: bytes, complete: bool, out: list[bytes]) -> None:
        if not self._over:
            if len(self._head) + len(part) <= HEAD_BYTES:
                self._head += part
            else:  # too large to be a usage event: read its head, relay what was held and the rest as it comes
                self._over = True
                self._read(bytes(self._head))
                if self.strip_usage:
                    out.append(bytes(self._head))
                self._head.clear()
        if self._over:
            if self.strip_usage:
                out.append(part)
            if complete:
                self._over = False
            return
        if complete:
            self._finish(out)

    def _finish(self, out: list[bytes]) -> None:
        event = bytes(self._head)
        self._head.clear()
        usage_only = self._read(event)
        if self.strip_usage and not usage_only:
            out.append(event)

    def _read(self, event: bytes) -> bool:
        """Account for one event (or the head of a large one); True when it is a usage-only event."""
        lines = [line[5:] for line in event.split(b"\n") if line.startswith(b"data:")]
        if not lines:
            return False
        data = b"\n".join(line[1:] if line.startswith(b" ") else line for line in lines).rstrip(b"\r")
        self.data_events += 1
        if data == b"[DONE]":
            self.done = True
            return False
        if b'"usage"' not in data:
            return False
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            return False
        usage = obj.get("usage") if isinstance(obj, dict) else None
        if not isinstance(usage, dict):
            return False
        tokens = usage.get("completion_tokens")
        if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens >= 0:
            self.completion_tokens = tokens
        if obj.get("choices") == []:
            self.usage_events += 1
            return True
        return False

    @property
    def engine_steps(self) -> int:
        """Content chunks: each vLLM chunk carries one engine step's tokens (chat adds a role-only chunk)."""
        steps = self.data_events - self.usage_events - (1 if self.done else 0) - (1 if self.chat else 0)
        return max(steps, 0)


def event_data(event: bytes) -> bytes:
    """One SSE event's data: its `data:` lines, each without the field name and one leading space, joined."""
    return b"\n".join(line[5:].lstrip(b" ") for line in event.split(b"\n") if line.startswith(b"data:"))


def _first_special(data: bytes, start: int) -> int:
    """Where the first `"usage"` or `[DONE]` at or after `start` is, or -1."""
    usage, done = data.find(b'"usage"', start), data.find(b"[DONE]", start)
    return done if usage < 0 else usage if done < 0 else min(usage, done)
