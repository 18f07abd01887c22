"""The SSE tap reads the same events however the upstream's bytes are cut into chunks."""

from __future__ import annotations

import itertools

import orjson
from hypothesis import given
from hypothesis import strategies as st

from gateway.streaming import SseTap

content = st.text(alphabet=st.sampled_from('ab "\\{}:[]data DONE\n'), max_size=12)
plain_event = content.map(lambda t: b"data: " + orjson.dumps({"choices": [{"delta": {"content": t}}]}) + b"\n\n")
usage_event = st.integers(0, 5000).map(
    lambda n: b"data: " + orjson.dumps({"choices": [], "usage": {"completion_tokens": n}}) + b"\n\n")
usage_in_chunk = st.integers(0, 5000).map(
    lambda n: b"data: " + orjson.dumps({"choices": [{"delta": {}}], "usage": {"completion_tokens": n}}) + b"\n\n")
two_line_event = content.map(lambda t: b'data: {"choices":\ndata: [' + orjson.dumps(t) + b"]}\n\n")
comment = st.just(b": ping\n\n")
done = st.just(b"data: [DONE]\n\n")
events = st.lists(st.one_of(plain_event, plain_event, usage_event, usage_in_chunk, two_line_event, comment, done),
                  max_size=30)


def reference(events: list[bytes], strip: bool) -> tuple[int, int, bool, int | None, bytes]:
    """Counted one whole event at a time, the plain way."""
    data_events = usage_events = 0
    is_done, tokens, out = False, None, b""
    for event in events:
        lines = [line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
        usage_only = False
        if lines:
            data_events += 1
            data = b"\n".join(lines)
            if data == b"[DONE]":
                is_done = True
            elif b'"usage"' in data:
                obj = orjson.loads(data)
                tokens = obj["usage"]["completion_tokens"]
                usage_only = obj["choices"] == []
                usage_events += usage_only
        if not (strip and usage_only):
            out += event
    return data_events, usage_events, is_done, tokens, out


@given(events=events, cuts=st.lists(st.integers(0, 4000), max_size=12), strip=st.booleans())
def test_any_chunking_reads_the_same_events(events: list[bytes], cuts: list[int], strip: bool) -> None:
    stream = b"".join(events)
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    tap = SseTap(strip_usage=strip, chat=True)
    relayed = b"".join(tap.feed(stream[a:b]) for a, b in itertools.pairwise(points) if b > a)
    relayed += tap.flush()
    data_events, usage_events, is_done, tokens, out = reference(events, strip)
    assert (tap.data_events, tap.usage_events, tap.done, tap.completion_tokens) == (
        data_events, usage_events, is_done, tokens)
    assert relayed == out
