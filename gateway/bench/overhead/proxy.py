"""The floor: a bare aiohttp pass-through proxy (no parsing, no routing, no metrics), one upstream.

    python -m gateway.bench.overhead.proxy --port 8100 --upstream http://127.0.0.1:8001
"""

from __future__ import annotations

import argparse
import contextlib
import sys

import aiohttp
from aiohttp import web

DROP = frozenset({"host", "content-length", "transfer-encoding", "connection", "keep-alive", "accept-encoding"})
DROP_BACK = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding",
                       "server", "date"})


def make_app(upstream: str) -> web.Application:
    async def start(app: web.Application) -> None:
        app["session"] = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), auto_decompress=False)

    async def stop(app: web.Application) -> None:
        await app["session"].close()

    async def forward(request: web.Request) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in DROP}
        body = await request.read()
        session: aiohttp.ClientSession = request.app["session"]
        async with session.request(request.method, upstream + request.path_qs, data=body, headers=headers) as up:
            back = {k: v for k, v in up.headers.items() if k.lower() not in DROP_BACK}
            if not up.headers.get("content-type", "").startswith("text/event-stream"):
                return web.Response(status=up.status, body=await up.read(), headers=back)
            out = web.StreamResponse(status=up.status, headers=back)
            await out.prepare(request)
            while chunk := await up.content.readany():
                await out.write(chunk)
            await out.write_eof()
            return out

    app = web.Application()
    app.on_startup.append(start)
    app.on_cleanup.append(stop)
    app.router.add_route("*", "/{tail:.*}", forward)
    return app


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.bench.overhead.proxy", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    args = parser.parse_args(argv)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    web.run_app(make_app(args.upstream.rstrip("/")), host=args.host, port=args.port, access_log=None, print=None,
                backlog=4096)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
