"""A zero-delay vLLM-compatible backend for `specgate bench-overhead` (run as its own process).

Answers /v1/chat/completions and /v1/completions, plain and streaming (`--chunks` content chunks in
vLLM's SSE framing, `stream_options.include_usage` and `continuous_usage_stats` honoured), /health,
/v1/models and a minimal /metrics (vLLM names; spec-decode counters with `--role speculative`).
Bodies are built once per variant and cached, so the backend costs as little CPU as possible.
`POST /bench/config {"chunk_delay_s": 0.05}` slows streams down (the open-streams RSS test).

    python -m gateway.bench.overhead.backend --port 8001 --role baseline --chunks 64
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
from dataclasses import dataclass, field

import orjson
from aiohttp import web

MODEL = "specgate-bench"
PROMPT_TOKENS = 16
GAMMA = 4


@dataclass(slots=True)
class BackendState:
    role: str
    chunks: int
    chunk_delay_s: float = 0.0
    running: int = 0
    completed: int = 0
    generation_tokens: int = 0
    cache: dict[tuple[bool, bool, bool, bool], object] = field(default_factory=dict)


def _usage(completion: int) -> dict[str, int]:
    return {"prompt_tokens": PROMPT_TOKENS, "total_tokens": PROMPT_TOKENS + completion,
            "completion_tokens": completion}


def _choice(chat: bool, i: int, finish: str | None) -> dict[str, object]:
    token = f" tok{i}"
    if chat:
        return {"index": 0, "delta": {"content": token}, "logprobs": None, "finish_reason": finish}
    return {"index": 0, "text": token, "logprobs": None, "finish_reason": finish, "stop_reason": None}


def full_body(chat: bool, chunks: int) -> bytes:
    text = "".join(f" tok{i}" for i in range(chunks))
    if chat:
        choice: dict[str, object] = {"index": 0, "message": {"role": "assistant", "content": text,
                                                             "tool_calls": []},
                                     "logprobs": None, "finish_reason": "length", "stop_reason": None}
        head = {"id": "chatcmpl-bench", "object": "chat.completion"}
    else:
        choice = {"index": 0, "text": text, "logprobs": None, "finish_reason": "length", "stop_reason": None}
        head = {"id": "cmpl-bench", "object": "text_completion"}
    return orjson.dumps({**head, "created": 1700000000, "model": MODEL, "choices": [choice],
                         "usage": _usage(chunks)})


def stream_events(chat: bool, chunks: int, include_usage: bool, continuous: bool) -> list[bytes]:
    """One `data: ...\\n\\n` event per engine step, as vLLM frames them (chat opens with a role chunk)."""
    head: dict[str, object] = ({"id": "chatcmpl-bench", "object": "chat.completion.chunk"} if chat
                               else {"id": "cmpl-bench", "object": "text_completion"})
    head = {**head, "created": 1700000000, "model": MODEL}
    events: list[dict[str, object]] = []
    if chat:
        role: dict[str, object] = {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                        "logprobs": None, "finish_reason": None}]}
        if include_usage and continuous:
            role["usage"] = _usage(0)
        events.append(role)
    for i in range(chunks):
        event: dict[str, object] = {**head, "choices": [_choice(chat, i, "length" if i == chunks - 1 else None)]}
        if include_usage and continuous:
            event["usage"] = _usage(i + 1)
        events.append(event)
    if include_usage:
        events.append({**head, "choices": [], "usage": _usage(chunks)})
    out = [b"data: " + orjson.dumps(e) + b"\n\n" for e in events]
    out.append(b"data: [DONE]\n\n")
    return out


def _variant(state: BackendState, chat: bool, body: dict[str, object]) -> object:
    stream = bool(body.get("stream"))
    options = body.get("stream_options")
    include = bool(options.get("include_usage")) if isinstance(options, dict) else False
    continuous = bool(options.get("continuous_usage_stats")) if isinstance(options, dict) else False
    key = (chat, stream, include, continuous)
    cached = state.cache.get(key)
    if cached is None:
        cached = stream_events(chat, state.chunks, include, continuous) if stream else full_body(chat, state.chunks)
        state.cache[key] = cached
    return cached


def make_app(state: BackendState) -> web.Application:
    async def completion(request: web.Request, chat: bool) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return web.json_response({"error": {"message": "bad json"}}, status=400)
        variant = _variant(state, chat, body)
        state.running += 1
        try:
            if isinstance(variant, bytes):
                return web.Response(body=variant, content_type="application/json")
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8"})
            await resp.prepare(request)
            delay = state.chunk_delay_s
            assert isinstance(variant, list)
            for event in variant:
                await resp.write(event)
                if delay:
                    await asyncio.sleep(delay)
            await resp.write_eof()
            return resp
        finally:
            state.running -= 1
            state.completed += 1
            state.generation_tokens += state.chunks

    async def chat(request: web.Request) -> web.StreamResponse:
        return await completion(request, True)

    async def completions(request: web.Request) -> web.StreamResponse:
        return await completion(request, False)

    async def health(_: web.Request) -> web.Response:
        return web.Response()

    async def models(_: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model", "owned_by": "vllm"}]})

    async def metrics(_: web.Request) -> web.Response:
        return web.Response(text=metrics_text(state), content_type="text/plain")

    async def config(request: web.Request) -> web.Response:
        body = orjson.loads(await request.read())
        state.chunk_delay_s = float(body.get("chunk_delay_s", state.chunk_delay_s))
        return web.json_response({"chunk_delay_s": state.chunk_delay_s, "completed": state.completed})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_post("/v1/completions", completions)
    app.router.add_get("/health", health)
    app.router.add_get("/v1/models", models)
    app.router.add_get("/metrics", metrics)
    app.router.add_post("/bench/config", config)
    return app


def _histograms_filler() -> str:
    """What else a real vLLM scrape holds, by size (tests/fixtures: 48 KB; 17 histograms, 47 gauges, 20 counters):
    24 histograms of 16 buckets, ~50 KB in all. The gateway reads none of it, but it scans all of it on every
    scrape of every backend."""
    bounds = [0.001 * 2**i for i in range(15)] + [float("inf")]
    lines = []
    for h in range(24):
        name = f"vllm:bench_filler_{h}_seconds"
        labels = f'engine="0",model_name="{MODEL}"'
        lines += [f"# HELP {name} A latency histogram vLLM exports (bench filler).", f"# TYPE {name} histogram"]
        lines += [f'{name}_bucket{{{labels},le="{b!r}"}} {1000.0 * (i + 1)}'.replace("inf", "+Inf")
                  for i, b in enumerate(bounds)]
        lines += [f"{name}_count{{{labels}}} 16000.0", f"{name}_sum{{{labels}}} 123.456"]
        lines += [f"# HELP {name}_created A latency histogram vLLM exports (bench filler).",
                  f"# TYPE {name}_created gauge", f"{name}_created{{{labels}}} 1.7962061351565108e+09"]
    return "\n".join(lines) + "\n"


FILLER = _histograms_filler()


def metrics_text(state: BackendState) -> str:
    """The series the gateway reads, then `FILLER`: a scrape as large as a real vLLM server's."""
    label = f'{{model_name="{MODEL}"}}'
    lines = [
        "# TYPE vllm:num_requests_running gauge", f"vllm:num_requests_running{label} {state.running}",
        "# TYPE vllm:num_requests_waiting gauge", f"vllm:num_requests_waiting{label} 0",
        "# TYPE vllm:kv_cache_usage_perc gauge", f"vllm:kv_cache_usage_perc{label} {min(state.running / 512, 1.0)}",
        "# TYPE vllm:generation_tokens_total counter", f"vllm:generation_tokens_total{label} {state.generation_tokens}",
    ]
    if state.role == "speculative":
        # Every engine step drafts GAMMA tokens and accepts half of them: acceptance length 3.
        drafts = state.generation_tokens // 3
        accepted = drafts * GAMMA // 2
        lines += [
            "# TYPE vllm:spec_decode_num_drafts_total counter", f"vllm:spec_decode_num_drafts_total{label} {drafts}",
            "# TYPE vllm:spec_decode_num_draft_tokens_total counter",
            f"vllm:spec_decode_num_draft_tokens_total{label} {drafts * GAMMA}",
            "# TYPE vllm:spec_decode_num_accepted_tokens_total counter",
            f"vllm:spec_decode_num_accepted_tokens_total{label} {accepted}",
            "# TYPE vllm:spec_decode_num_accepted_tokens_per_pos_total counter",
        ]
        lines += [f'vllm:spec_decode_num_accepted_tokens_per_pos_total{{model_name="{MODEL}",position="{p}"}} '
                  f"{drafts * (GAMMA - p) // GAMMA}" for p in range(GAMMA)]
    return "\n".join(lines) + "\n" + FILLER


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m gateway.bench.overhead.backend",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--role", choices=("baseline", "speculative"), default="baseline")
    parser.add_argument("--chunks", type=int, default=64)
    parser.add_argument("--chunk-delay-s", type=float, default=0.0)
    args = parser.parse_args(argv)
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    state = BackendState(role=args.role, chunks=args.chunks, chunk_delay_s=args.chunk_delay_s)
    web.run_app(make_app(state), host=args.host, port=args.port, access_log=None, print=None, backlog=4096)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
