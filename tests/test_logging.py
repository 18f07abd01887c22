"""Every log line is one JSON object with time, level and event; the access log is written in batches, in order."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import orjson
import pytest

from gateway.accesslog import CAPACITY, AccessLog
from gateway.server import JsonLineFormatter, attach_access_log, configure_logging


@pytest.fixture
def stderr_lines() -> Iterator[io.BytesIO]:
    """The process's logging configured as `specgate serve` does, into a buffer instead of stderr."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    out = io.BytesIO()
    configure_logging("info")
    handler = logging.getLogger().handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(io.TextIOWrapper(out, write_through=True))
    yield out
    root.handlers[:] = handlers
    root.setLevel(level)


def test_formatter_puts_time_and_level_first_and_keeps_json_fields() -> None:
    record = logging.LogRecord("specgate", logging.WARNING, __file__, 1, '{"event": "eject", "backend": "b"}', None,
                               None)
    line = orjson.loads(JsonLineFormatter().format(record))
    assert line["level"] == "warning" and line["event"] == "eject" and line["backend"] == "b"
    assert line["time"].endswith("Z") and "T" in line["time"]
    plain = logging.LogRecord("aiohttp.server", logging.INFO, __file__, 1, "hello %s", ("there",), None)
    assert orjson.loads(JsonLineFormatter().format(plain))["message"] == "hello there"
    empty = logging.LogRecord("x", logging.INFO, __file__, 1, "{}", None, None)
    assert set(orjson.loads(JsonLineFormatter().format(empty))) == {"time", "level"}


def test_access_lines_are_batched_and_written_before_any_later_line(stderr_lines: io.BytesIO) -> None:
    access = AccessLog()
    attach_access_log(access, stderr_lines)
    for i in range(3):
        access.write({"event": "request", "id": f"r{i}", "status": "200"})
    assert stderr_lines.getvalue() == b""  # buffered: no write per request
    logging.getLogger("specgate").warning('{"event": "eject", "backend": "baseline-0"}')
    lines = [orjson.loads(raw) for raw in stderr_lines.getvalue().splitlines()]
    assert [line.get("id") for line in lines] == ["r0", "r1", "r2", None]  # the access lines first
    assert lines[3]["event"] == "eject"
    assert all({"time", "level", "event"} <= line.keys() for line in lines)


def test_access_log_writes_a_full_batch_by_itself() -> None:
    out = io.BytesIO()
    access = AccessLog()
    access.attach(out)
    for i in range(CAPACITY):
        access.write({"event": "request", "id": i, "note": 'a "quoted" value\nwith a newline'})
    lines = out.getvalue().splitlines()
    assert len(lines) == CAPACITY  # one line each: a value cannot break a line
    assert orjson.loads(lines[-1])["note"] == 'a "quoted" value\nwith a newline'


def test_without_a_stream_lines_go_to_the_access_logger(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="specgate.access")
    AccessLog().write({"event": "request", "id": "x"})
    [record] = [r for r in caplog.records if r.name == "specgate.access"]
    assert orjson.loads(record.getMessage())["id"] == "x"
