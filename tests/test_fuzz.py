"""Fuzz the request path: Hypothesis JSON bodies and raw malformed HTTP against a real gateway.

The gateway must answer a client's mistake with a 4xx (OpenAI-shaped wherever a handler ran), never a
5xx; it must keep serving; and the tasks and connections it holds must come back to where they started.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import aiohttp
import psutil
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gateway.bench.kit.fake_vllm import FakeBackend
from gateway.bench.kit.inproc import fast_settings, start_gateway, until
from gateway.state import AppState

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
GOOD = {"model": "fake-model", "messages": [{"role": "user", "content": "ok"}], "max_tokens": 4}
FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def _request_tasks(gateway_server: object) -> int:
    """Tasks other than the caller, the pool's background work (health checks and scrapes, whose gathers spawn
    a task per backend every 250 ms) and the fakes' connection handlers (one per connection the gateway's pool
    keeps open to them, counted by `upstream` instead): what a leak would show up in."""
    current = asyncio.current_task()
    return sum(1 for t in asyncio.all_tasks()
               if t is not current and not getattr(t.get_coro(), "__qualname__", "").startswith("BackendPool.")
               and _server_of(t) in (None, gateway_server))


def _server_of(task: asyncio.Task[Any]) -> object:
    """The aiohttp server whose connection `task` handles (None for any other task)."""
    frame = getattr(task.get_coro(), "cr_frame", None)
    handler = frame.f_locals.get("self") if frame is not None else None
    return getattr(handler, "_manager", None) if type(handler).__name__ == "RequestHandler" else None


class Harness:
    """Two fakes and a gateway on one private event loop, driven synchronously from Hypothesis."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.base, self.spec = FakeBackend(), FakeBackend(spec=True)
        self.run(self.base.start())
        self.run(self.spec.start())
        self.gw = self.run(start_gateway(fast_settings(baseline_urls=[self.base.url],
                                                       speculative_urls=[self.spec.url], max_body_bytes=64 * 1024,
                                                       first_byte_timeout_s=5)))
        host, port = self.gw.url.removeprefix("http://").split(":")
        self.host, self.port = host, int(port)
        self.session = self.run(self._session())

    async def _session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(force_close=True))

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        self.run(self.session.close())
        self.run(self.gw.runner.cleanup())
        self.run(self.base.stop())
        self.run(self.spec.stop())
        self.loop.run_until_complete(asyncio.sleep(0.05))
        self.loop.close()

    # --- what we count
    def tasks(self) -> int:
        async def count() -> int:
            return _request_tasks(self.gw.runner.server)
        return int(self.run(count()))

    def upstream(self) -> tuple[int, int]:
        """(connections in use, idle pooled connections) of the gateway's completion client."""
        client = self.gw.app[AppState.key].proxy.client
        assert client is not None
        return client.in_use(), client.idle()

    def upstream_settled(self, timeout_s: float = 5.0) -> tuple[int, int]:
        """`upstream()` at a moment when no connection is in use (the test fails after `timeout_s` otherwise): a single
        reading on a busy machine can catch a request's connection in flight; a leaked one stays in use at every
        reading."""
        self.run(until(lambda: self.upstream()[0] == 0, timeout_s))
        return self.upstream()

    def gateway_sockets(self) -> dict[str, int]:
        """States of this process's TCP sockets on the gateway's port (server side)."""
        states: dict[str, int] = {}
        for c in psutil.Process().net_connections(kind="tcp"):
            if c.laddr and c.laddr.port == self.port and c.status != psutil.CONN_LISTEN:
                states[c.status] = states.get(c.status, 0) + 1
        return states

    def settle(self, baseline_tasks: int, timeout_s: float = 2.0) -> int:
        async def wait() -> int:
            deadline = self.loop.time() + timeout_s
            while True:
                n = _request_tasks(self.gw.runner.server)
                if n <= baseline_tasks or self.loop.time() > deadline:
                    return n
                await asyncio.sleep(0.01)
        return int(self.run(wait()))

    # --- requests
    def post(self, path: str, data: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
        async def go() -> tuple[int, bytes]:
            async with self.session.post(self.gw.url + path, data=data,
                                         headers=headers or {"Content-Type": "application/json"},
                                         timeout=aiohttp.ClientTimeout(total=10)) as r:
                return r.status, await r.read()
        result: tuple[int, bytes] = self.run(go())
        return result

    def good(self) -> None:
        for stream in (False, True):
            status, data = self.post(CHAT, json.dumps({**GOOD, "stream": stream}).encode())
            assert status == 200, data

    def raw(self, request: bytes, half_close: bool = True) -> bytes:
        async def go() -> bytes:
            reader, writer = await asyncio.open_connection(self.host, self.port)
            try:
                writer.write(request)
                await writer.drain()
                if half_close and writer.can_write_eof():
                    writer.write_eof()
                got = b""
                # half-closed: read to EOF; otherwise a keep-alive connection may stay open: read while it talks
                per_read = 5.0 if half_close else 0.1
                while chunk := await asyncio.wait_for(reader.read(65536), per_read):
                    got += chunk
                return got
            except (ConnectionResetError, BrokenPipeError):
                return b""
            except TimeoutError:
                return got
            finally:
                writer.transport.abort()
        result: bytes = self.run(go())
        return result


@pytest.fixture(scope="module")
def harness() -> Iterator[Harness]:
    h = Harness()
    h.good()  # warm: pooled upstream connections and lazily created tasks exist from here on
    yield h
    h.close()


def assert_openai_error(data: bytes) -> None:
    body = json.loads(data)
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"message", "type", "param", "code"}, body
    assert isinstance(body["error"]["message"], str) and body["error"]["type"] == "invalid_request_error"


# ------------------------------------------------------------------------------------------ bodies

scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False),
                    st.text(max_size=20))
junk = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)), max_leaves=12)
message = st.one_of(junk, st.fixed_dictionaries(
    {"role": st.one_of(st.sampled_from(["user", "system", "assistant", "tool"]), junk),
     "content": st.one_of(st.text(max_size=50), st.lists(st.one_of(
         junk, st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(st.text(max_size=20), junk)})),
         max_size=3), junk)}))
FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "model": st.one_of(st.just("fake-model"), st.text(max_size=10), junk),
    "messages": st.one_of(st.lists(message, max_size=3), junk),
    "prompt": st.one_of(st.text(max_size=40), st.lists(st.text(max_size=8), max_size=3),
                        st.lists(st.integers(-5, 2**40), max_size=5), st.lists(st.lists(st.integers(0, 9)),
                                                                               max_size=3), junk),
    "temperature": st.one_of(st.floats(-1, 3), junk), "top_p": st.one_of(st.floats(-0.5, 1.5), junk),
    "max_tokens": st.one_of(st.integers(-3, 2**63), junk),
    "max_completion_tokens": st.one_of(st.integers(-3, 99), junk),
    "stream": st.one_of(st.booleans(), junk), "n": st.one_of(st.integers(-2, 5), junk),
    "stream_options": st.one_of(st.fixed_dictionaries({"include_usage": junk}), junk),
    "response_format": st.one_of(st.fixed_dictionaries({"type": junk}), junk),
    "tools": junk, "tool_choice": junk, "extra_body": junk, "guided_json": junk, "stop": junk,
}
near_valid = st.fixed_dictionaries(
    {"model": st.just("fake-model"), "messages": st.just(GOOD["messages"]), "prompt": st.text(max_size=30)},
    optional={"temperature": st.one_of(st.floats(0, 2), junk), "max_tokens": st.one_of(st.integers(1, 64), junk),
              "stream": st.booleans(), "n": st.integers(1, 3), "top_p": st.floats(0, 1),
              "stream_options": st.one_of(st.fixed_dictionaries({"include_usage": junk}), junk),
              "response_format": st.one_of(st.fixed_dictionaries({"type": junk}), junk),
              "tools": junk, "extra_body": junk, "stop": junk, "seed": junk, "logprobs": junk})
bodies = st.one_of(
    near_valid,
    st.fixed_dictionaries({}, optional=FIELDS).flatmap(
        lambda d: st.dictionaries(st.text(max_size=6), junk, max_size=3).map(lambda extra: {**extra, **d})),
    junk,
)


def encode(body: Any) -> bytes:
    return json.dumps(body, allow_nan=True).encode()


@FUZZ
@given(body=bodies, path=st.sampled_from([CHAT, COMPLETIONS]))
def _fuzz_bodies(harness: Harness, body: Any, path: str) -> None:
    status, data = harness.post(path, encode(body))
    assert status < 500, (status, data)
    if status >= 400:
        assert_openai_error(data)


@FUZZ
@given(raw=st.one_of(st.binary(max_size=200), st.text(max_size=100).map(lambda t: t.encode("utf-8", "surrogatepass")),
                     st.sampled_from([b"{", b"[1,2", b'{"model": "m", "messages": [', b"\xff\xfe{}", b"null",
                                      b'{"model": "m"}' * 2, b'{"a": 1e999}', b'{"a": NaN}', b"", b"\x00" * 10])),
       path=st.sampled_from([CHAT, COMPLETIONS]),
       content_type=st.sampled_from(["application/json", "text/plain", "", "application/json; charset=latin-1"]))
def _fuzz_raw_bodies(harness: Harness, raw: bytes, path: str, content_type: str) -> None:
    status, data = harness.post(path, raw, {"Content-Type": content_type} if content_type else {})
    assert status < 500, (status, data)
    if status >= 400:
        assert_openai_error(data)


def test_fuzz_json_bodies(harness: Harness) -> None:
    tasks0, sockets0 = harness.tasks(), harness.gateway_sockets()
    calls0 = harness.base.calls + harness.spec.calls
    _fuzz_bodies(harness)
    _fuzz_raw_bodies(harness)
    assert harness.base.calls + harness.spec.calls > calls0 + 5  # some generated bodies were valid and proxied
    harness.good()
    assert harness.settle(tasks0) <= tasks0, "tasks leaked"
    in_use, idle = harness.upstream_settled()
    assert in_use == 0 and idle <= 4, (in_use, idle)
    assert harness.gateway_sockets().get(psutil.CONN_ESTABLISHED, 0) <= sockets0.get(psutil.CONN_ESTABLISHED, 0)
    assert harness.gateway_sockets().get(psutil.CONN_CLOSE_WAIT, 0) == 0


# ------------------------------------------------------------------------------------------ raw HTTP

token = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=12).map(str.encode)
header_lines = st.lists(st.one_of(
    st.tuples(token, st.binary(max_size=40)).map(lambda kv: kv[0] + b": " + kv[1].replace(b"\r\n", b"")),
    st.sampled_from([b"Content-Length: -1", b"Content-Length: abc", b"Content-Length: 99999999999999999999",
                     b"Content-Length: 5", b"Content-Length: 5\r\nContent-Length: 6", b"Transfer-Encoding: chunked",
                     b"Transfer-Encoding: gzip, chunked", b"Transfer-Encoding: bogus", b"no colon here",
                     b" leading: space", b"Host:", b"Expect: 100-continue", b"Connection: upgrade\r\nUpgrade: h2c",
                     b"Content-Type: application/json", b"X-Nul: a\x00b", b"Authorization: Bearer \xff"]),
    st.integers(1, 3).map(lambda k: b"X-Huge: " + b"h" * (k * 9000)),
), max_size=6)
request_lines = st.one_of(
    st.tuples(st.sampled_from([b"POST", b"GET", b"PUT", b"DELETE", b"PATCH", b"OPTIONS", b"HEAD", b"BREW", b"post"]),
              st.sampled_from([CHAT.encode(), COMPLETIONS.encode(), b"/v1/models", b"/health", b"/ready",
                               b"/admin/config", b"/v1/../../etc/passwd", b"*", b"http://evil/v1/completions",
                               b"/v1/chat/completions?x=%zz", b"/" + b"a" * 9000, b"/v1/%00"]),
              st.sampled_from([b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/9.9", b"HTTP/1.1 extra", b"", b"HTTX/1"]))
    .map(lambda t: b" ".join(x for x in t if x)),
    st.binary(max_size=60).map(lambda b: b.replace(b"\r\n", b"")),
)
bodies_raw = st.one_of(st.just(b""), st.just(json.dumps(GOOD).encode()), st.binary(max_size=100),
                       st.just(b"5\r\nhello\r\n0\r\n\r\n"), st.just(b"zz\r\nbad chunk\r\n"),
                       st.just(json.dumps(GOOD).encode()[:20]))


@FUZZ
@given(line=request_lines, headers=header_lines, body=bodies_raw, half_close=st.booleans())
def _fuzz_http(harness: Harness, line: bytes, headers: list[bytes], body: bytes, half_close: bool) -> None:
    head = line + b"\r\nHost: 127.0.0.1\r\n" + b"".join(h + b"\r\n" for h in headers) + b"\r\n"
    answer = harness.raw(head + body, half_close=half_close)
    for status_line in [ln for ln in answer.split(b"\r\n") if ln.startswith(b"HTTP/1.")]:
        parts = status_line.split(b" ")
        if len(parts) > 1 and parts[1].isdigit():
            assert int(parts[1]) < 500, answer[:400]


def test_fuzz_raw_http(harness: Harness) -> None:
    tasks0, sockets0 = harness.tasks(), harness.gateway_sockets()
    _fuzz_http(harness)
    harness.good()
    assert harness.settle(tasks0) <= tasks0, "tasks leaked"
    in_use, idle = harness.upstream_settled()
    assert in_use == 0 and idle <= 4, (in_use, idle)
    states = harness.gateway_sockets()
    assert states.get(psutil.CONN_ESTABLISHED, 0) <= sockets0.get(psutil.CONN_ESTABLISHED, 0), states
    assert states.get(psutil.CONN_CLOSE_WAIT, 0) == 0, states


def test_truncated_bodies_then_close(harness: Harness) -> None:
    """Content-Length larger than what arrives, then the client goes: no 5xx, nothing left behind."""
    tasks0 = harness.tasks()
    full = json.dumps(GOOD).encode()
    for cut in (0, 1, len(full) // 2, len(full) - 1):
        for half_close in (True, False):
            head = (f"POST {CHAT} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(full)}\r\n\r\n").encode()

            async def go(data: bytes = head + full[:cut], hc: bool = half_close) -> bytes:
                reader, writer = await asyncio.open_connection(harness.host, harness.port)
                writer.write(data)
                await writer.drain()
                if hc:
                    writer.write_eof()
                else:
                    await asyncio.sleep(0.05)
                    writer.transport.abort()
                    return b""
                try:
                    return await asyncio.wait_for(reader.read(-1), 5)
                finally:
                    writer.transport.abort()

            answer = harness.run(go())
            assert b"HTTP/1.1 5" not in answer, answer[:300]
    harness.good()
    assert harness.settle(tasks0) <= tasks0
    assert harness.upstream_settled()[0] == 0
    assert harness.base.calls + harness.spec.calls >= 2  # only the good requests reached a backend
