"""`specgate serve`: run the gateway (uvloop), drain on SIGTERM, optionally as N processes on one port."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import logging
import os
import signal
import sys
import tempfile
import time
from typing import BinaryIO

import orjson
from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from gateway.accesslog import AccessLog, IsoTime
from gateway.app import create_app
from gateway.logevents import log_event
from gateway.settings import Settings
from gateway.state import AppState
from gateway.supervisor import Supervisor

log = logging.getLogger("specgate")


class JsonLineFormatter(logging.Formatter):
    """Every line one JSON object that starts with its time and level. A message that is already a JSON object
    (the request path writes its lines with orjson) gets them spliced in front, without being parsed again;
    any other message becomes `message`, and a traceback `traceback`."""

    def __init__(self) -> None:
        super().__init__()
        self._time = IsoTime()

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        head = f'{{"time":"{self._time(record.created)}","level":"{record.levelname.lower()}",'
        if not record.exc_info and message.startswith("{") and message.endswith("}"):
            return _splice(head, message)
        line: dict[str, object] = {"logger": record.name, "message": message}
        if message.startswith("{"):
            with contextlib.suppress(orjson.JSONDecodeError):
                parsed = orjson.loads(message)
                line = parsed if isinstance(parsed, dict) else line
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        line.pop("time", None)
        line.pop("level", None)
        return _splice(head, orjson.dumps(line, option=orjson.OPT_NON_STR_KEYS).decode())


def _splice(head: str, obj: str) -> str:
    """`head` (`{"time":...,`) and the members of the JSON object `obj` as one object."""
    return head + obj[1:] if obj.strip("{} ") else head[:-1] + "}"


def configure_logging(level: str) -> None:
    """JSON lines on stderr; records carry no thread, process or caller fields (no line uses them; gathering
    them is a third of a record's cost). The access log is written apart, in batches (`AccessLog`)."""
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    logging._srcfile = None  # the logging HOWTO's "Optimization": no stack walk per record for a caller's file
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonLineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    logging.getLogger("aiohttp.server").addFilter(_client_errors_without_traceback)


def attach_access_log(access: AccessLog, stream: BinaryIO | None = None) -> None:
    """The access log to `stream` (stderr) in batches; every other line first writes out the access lines
    before it."""
    access.attach(stream if stream is not None else sys.stderr.buffer)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_FlushFirst(access))


class _FlushFirst(logging.Filter):
    def __init__(self, access: AccessLog) -> None:
        super().__init__()
        self.access = access

    def filter(self, record: logging.LogRecord) -> bool:
        self.access.flush()
        return True


def _client_errors_without_traceback(record: logging.LogRecord) -> bool:
    """A malformed request from a client is one log line, not a traceback a client can make us write."""
    exc = record.exc_info[1] if record.exc_info else None
    if isinstance(exc, HttpProcessingError):
        record.msg, record.args = f"{record.getMessage()}: {type(exc).__name__} {exc.code}", ()
        record.exc_info, record.levelno, record.levelname = None, logging.INFO, "INFO"
    return True


async def serve(settings: Settings, *, reuse_port: bool = False) -> None:
    """Serve until SIGTERM/SIGINT, then drain: /ready turns 503, new requests get 503, in-flight
    requests get `drain_timeout_s` to finish, the rest are cancelled (upstream closed)."""
    app = create_app(settings)
    state = app[AppState.key]
    access = state.proxy.accounting.access
    attach_access_log(access)
    runner = make_runner(app, settings)
    await runner.setup()
    site = GuardedSite(runner, settings, reuse_port=reuse_port)
    await site.start()
    log_event(log, logging.INFO, "listening", host=settings.host, port=settings.port, policy=settings.policy,
              pid=os.getpid())
    flusher = asyncio.create_task(_flush_logs(access), name="specgate-log-flush")
    _settle_the_heap(settings.gc_young_threshold)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    state.draining = True
    state.metrics.draining.set(1)
    deadline = time.monotonic() + settings.drain_timeout_s
    log_event(log, logging.INFO, "draining", inflight=state.active_requests)
    while state.active_requests > 0 and time.monotonic() < deadline:  # noqa: ASYNC110 -- polling a plain counter is simpler than an event set from every request
        await asyncio.sleep(0.05)
    log_event(log, logging.INFO, "stopping", cancelled_inflight=state.active_requests)
    await state.proxy.end_streams(0.5)  # each still-open stream ends with an SSE error event
    await runner.cleanup()
    flusher.cancel()
    access.flush()


def make_runner(app: web.Application, settings: Settings) -> web.AppRunner:
    """The keep-alive timeout is also the header timeout: aiohttp closes a connection whose request
    head has not arrived that long after it opened (or after the last response)."""
    return web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=0.5,
                         keepalive_timeout=settings.header_timeout_s)


class GuardedSite(web.TCPSite):
    """A TCP site that closes connections beyond `max_client_connections` at once."""

    def __init__(self, runner: web.AppRunner, settings: Settings, *, reuse_port: bool = False) -> None:
        super().__init__(runner, settings.host, settings.port, reuse_port=reuse_port or None, backlog=4096)
        self._limit = settings.max_client_connections
        self.bound_port = settings.port

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        limit = self._limit

        def factory() -> asyncio.Protocol:
            if len(server.connections) >= limit:
                return _Refuse()
            return server()

        loop = asyncio.get_running_loop()
        listening = await loop.create_server(factory, self._host, self._port, backlog=self._backlog,
                                             reuse_address=self._reuse_address, reuse_port=self._reuse_port)
        self._server = listening
        self.bound_port = int(listening.sockets[0].getsockname()[1])


class _Refuse(asyncio.Protocol):
    """Over the connection cap: answer 503 and close, without reading."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        transport.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        transport.close()


async def _flush_logs(access: AccessLog) -> None:
    while True:
        await asyncio.sleep(0.5)
        access.flush()


def _return_large_buffers_to_the_os() -> None:
    """glibc raises its mmap threshold after a large buffer is freed, so the next request bodies of a few
    MB come from the heap and stay in RSS. A fixed threshold keeps them mmapped: freed means returned."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD: 1 MiB, fixed


def _settle_the_heap(young_threshold: int) -> None:
    """Move everything alive after startup (modules, the app, the metrics registry) out of the collector's
    reach, and collect the young generation less often: a request allocates a few hundred short-lived
    objects, and with Python's defaults the collector ran every few requests and its full passes walked
    every long-lived object again (7% of a plain request's CPU in a native py-spy profile at c = 64 on a busy
    machine; 3-4% measured alone on it: results/overhead-2026-12-04-d/)."""
    if young_threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(young_threshold, older, oldest)


def _run_worker(settings: Settings, reuse_port: bool) -> None:
    _return_large_buffers_to_the_os()
    configure_logging(settings.log_level)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    asyncio.run(serve(settings, reuse_port=reuse_port))


def _run_workers(settings: Settings) -> int:
    if not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="specgate-prom-")
    return Supervisor(_run_worker, (settings, True), settings.workers).run()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="specgate serve", description="Run the gateway. Every setting is a "
                                     "SPECGATE_* environment variable; these flags override a few.")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--policy")
    parser.add_argument("--workers", type=int)
    parser.add_argument("--baseline-urls")
    parser.add_argument("--speculative-urls")
    args = parser.parse_args(argv)
    for name, value in vars(args).items():
        if value is not None:
            os.environ["SPECGATE_" + name.upper()] = str(value)
    settings = Settings()
    configure_logging(settings.log_level)
    if settings.workers > 1:
        return _run_workers(settings)
    _run_worker(settings, reuse_port=False)
    return 0
