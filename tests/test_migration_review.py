"""Live migration defects found in review (round o), each a regression test: what a faithful move does."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import openai
import pytest
from aiohttp import ClientSession, web
from test_hostile import Upstream
from test_migration import (
    GROUP,
    SCALE,
    _client,
    _migrations,
    _migrator,
    _one_gpu,
    _pair_gateway,
    _switch,
    reference,
)

from gateway.bench.kit.inproc import until
from gateway.core.migration import not_movable
from gateway.emulator import EmulatedPair
from gateway.state import AppState

# --- 1. chat with both max_tokens and max_completion_tokens: vLLM (and the emulator) obey max_completion_tokens,
# the router's features too, but resume_body refuses to resume once the (ignored) max_tokens is used up.

async def test_both_token_limits_a_moved_chat_still_completes(gateway_factory: Callable[..., Any]) -> None:
    async with EmulatedPair(profile="h200-ngram", time_scale=SCALE) as pair:
        pair.register_references({"b": reference(4)})
        gw = await _pair_gateway(gateway_factory, pair)
        migrator = _migrator(gw)
        client = _client(gw)
        head = {"x-request-id": "b"}
        body: Any = dict(model="specgate-emu", messages=[{"role": "user", "content": "Notes (b)."}], temperature=0,
                    max_tokens=5, max_completion_tokens=60)
        alone = await openai.AsyncOpenAI(base_url=pair.baseline_url + "/v1", api_key="x").chat.completions.create(
            **body, extra_headers=head)
        assert alone.usage is not None and alone.usage.completion_tokens == 60  # max_completion_tokens wins
        stream = await client.chat.completions.create(**body, stream=True, extra_headers=head)
        text, finishes, error = "", [], None
        try:
            async for chunk in stream:
                if chunk.choices:
                    text += chunk.choices[0].delta.content or ""
                    finishes += [chunk.choices[0].finish_reason] if chunk.choices[0].finish_reason else []
                if len(text) > 20 and not _migrations(gw):
                    live = next(iter(migrator.live[GROUP]), None)
                    if live is not None and live.join.completion_tokens > 6 and live.move_to is None:
                        _switch(gw, "speculative")
        except Exception as exc:  # the SDK raises on the gateway's SSE error event
            error = repr(exc)
        state = gw.app[AppState.key]
        print("error:", error, "resume_failed:", _migrations(gw, "resume_failed"),
              "failures:", [(b.name, b.consecutive_failures) for b in state.pool.backends])
        assert error is None, error
        assert _migrations(gw, "resume_failed") == 0
        assert text == alone.choices[0].message.content and finishes == ["length"]
        await client.close()


# --- a scripted vLLM-like upstream (both servers of the GPU are this one app); records each request body

def _chunk(obj_delta: dict[str, Any], finish: str | None, tokens: int, chat: bool = True,
           extra: dict[str, Any] | None = None) -> bytes:
    choice: dict[str, Any] = {"index": 0, "finish_reason": finish, **(extra or {})}
    if chat:
        choice["delta"] = obj_delta
    else:
        choice["text"] = obj_delta.get("content", "")
    obj = {"id": "up-1", "object": "chat.completion.chunk" if chat else "text_completion", "created": 1, "model": "m",
           "choices": [choice], "usage": {"prompt_tokens": 7, "completion_tokens": tokens, "total_tokens": 7 + tokens}}
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


@contextlib.asynccontextmanager
async def _scripted(script: Callable[[dict[str, Any], int], list[bytes]], hang_after: Callable[[int], bool]
                    ) -> AsyncIterator[tuple[str, list[dict[str, Any]]]]:
    """An upstream (`test_hostile.Upstream`) whose n-th request (0-based) streams `script(body, n)`; it then hangs
    (until the block ends) when `hang_after(n)`, else ends with [DONE]."""
    bodies: list[dict[str, Any]] = []
    hang = asyncio.Event()

    async def completion(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        n = len(bodies)
        bodies.append(body)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for part in script(body, n):
            await resp.write(part)
        if hang_after(n):
            await hang.wait()
        else:
            await resp.write(b"data: [DONE]\n\n")
        return resp

    up = Upstream(completion)
    await up.start()
    try:
        yield up.url, bodies
    finally:
        hang.set()
        await up.stop()


# --- 2. a reasoning model (vLLM --reasoning-parser): a non-streamed chat that may move is streamed upstream and
# joined; the joined answer drops the reasoning entirely (no move needed).

@pytest.mark.parametrize("key", ["reasoning_content", "reasoning"])  # vLLM's older and newer field names
async def test_a_joined_non_streamed_answer_keeps_the_reasoning(gateway_factory: Callable[..., Any], key: str) -> None:
    def script(_: dict[str, Any], n: int) -> list[bytes]:
        return [_chunk({"role": "assistant", "content": ""}, None, 0),
                _chunk({key: "Let me think."}, None, 3),
                _chunk({"content": "Answer."}, None, 5),
                _chunk({"content": ""}, "stop", 5)]

    async with _scripted(script, lambda n: False) as (url, bodies):
        gw = await _one_gpu(gateway_factory, url)
        async with ClientSession() as session, session.post(gw.url + "/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "hi"}]}) as resp:
            answer = await resp.json()
        print(json.dumps(answer["choices"][0]["message"]))
        assert bodies[0]["stream"] is True  # the gateway streamed it upstream to join it
        assert answer["choices"][0]["message"]["content"] == "Answer."
        assert answer["choices"][0]["message"].get(key) == "Let me think."


# --- 3. a reasoning stream moved mid-reasoning: the resume carries none of the reasoning already streamed, so the
# arriving server starts thinking again from nothing (the client sees the reasoning twice / a different one).

async def test_a_stream_moved_mid_reasoning_is_not_resumed_without_it(gateway_factory: Callable[..., Any]) -> None:
    def script(body: dict[str, Any], n: int) -> list[bytes]:
        if n == 0:
            return [_chunk({"role": "assistant", "content": ""}, None, 0),
                    _chunk({"reasoning_content": "Step one, "}, None, 3),
                    _chunk({"reasoning_content": "step two, "}, None, 6)]
        return [_chunk({"role": "assistant", "content": ""}, None, 0), _chunk({"content": "Done."}, "stop", 2)]

    async with _scripted(script, lambda n: n == 0) as (url, bodies):
        gw = await _one_gpu(gateway_factory, url)
        migrator = _migrator(gw)
        async with ClientSession() as session, session.post(gw.url + "/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}) as resp:
            got = b""
            while b"step two" not in got:
                got += await resp.content.readany()
            _switch(gw, "speculative", "gpu")
            # a resume carries the answer's text only: a stream with reasoning stays where it is
            assert [x.move_to for x in migrator.live["gpu"]] == [None]
        assert _migrations(gw) == 0 and len(bodies) == 1


# --- 4. completions `logprobs: 0` asks vLLM for the sampled tokens' logprobs (0 == False in Python, so
# `not_movable` lets it through); the non-streamed answer the gateway joins then has `logprobs: null`.

async def test_completions_logprobs_zero_keeps_its_logprobs(gateway_factory: Callable[..., Any]) -> None:
    lp = {"tokens": ["A"], "token_logprobs": [-0.1], "top_logprobs": [{}], "text_offset": [0]}

    def script(_: dict[str, Any], n: int) -> list[bytes]:
        return [_chunk({"content": "A"}, None, 1, chat=False, extra={"logprobs": lp}),
                _chunk({"content": ""}, "length", 1, chat=False, extra={"logprobs": None})]

    async with _scripted(script, lambda n: False) as (url, bodies):
        gw = await _one_gpu(gateway_factory, url)
        async with ClientSession() as session, session.post(gw.url + "/v1/completions", json={
                "model": "m", "prompt": "Q:", "max_tokens": 1, "logprobs": 0}) as resp:
            await resp.read()
        # never movable: passed through as it came (not streamed upstream, so not joined without its logprobs)
        assert "stream" not in bodies[0] and bodies[0]["logprobs"] == 0


# --- 5. sampling options that a resume from text does not reproduce: vLLM's presence/frequency penalties count
# only *generated* tokens (the partial answer becomes prompt on resume, so its repetitions go unpenalised);
# truncate_prompt_tokens keeps the last k tokens of the prompt, which on resume is prompt + partial answer;
# beam search keeps beams that text cannot carry; logprobs 0 (above). All are moved today.

@pytest.mark.parametrize(("chat", "extra"), [
    (False, {"logprobs": 0}),
    (True, {"frequency_penalty": 1.5}),
    (True, {"presence_penalty": 1.0}),
    (False, {"frequency_penalty": 0.8}),
    (True, {"truncate_prompt_tokens": 16}),
    (False, {"truncate_prompt_tokens": 16}),
    (False, {"use_beam_search": True}),
])
def test_requests_a_text_resume_does_not_reproduce_are_not_movable(chat: bool, extra: dict[str, Any]) -> None:
    body: dict[str, Any] = ({"model": "m", "messages": [{"role": "user", "content": "hi"}]} if chat
                            else {"model": "m", "prompt": "Q: "})
    assert not_movable(chat, {**body, **extra}) is not None


# --- 6. after a seam every continuation event runs `_open_stop`, which slices every prefix of each stop string
# (O(min(len(stop), len(text))^2) per event): a client's long stop string blocks the event loop for everyone.

@pytest.mark.parametrize("stop", [["y" + "x" * 100_000], ["x" * 600, "y" * 600], [f"s{i}" for i in range(17)]])
def test_a_long_stop_string_is_never_checked_at_a_seam(stop: list[str]) -> None:
    body = {"model": "m", "prompt": "Q: ", "stop": stop}
    assert not_movable(False, body) == "stop"  # so no `SeamCut` ever scans it
    assert not_movable(False, {**body, "stop": stop[:1] if len(stop[0]) < 100 else ["x" * 1024]}) is None


# --- 7. vLLM checks stop strings only once `min_tokens` are generated (vllm tests/detokenizer/test_min_tokens.py:
# min_tokens=5, stop="e" -> " is Lee, and I'm a stud"); the gateway's seam check stops a moved answer at a stop
# string that straddles the seam even while the request is still inside its min_tokens.

async def test_a_stop_across_the_seam_does_not_stop_before_min_tokens(gateway_factory: Callable[..., Any]) -> None:
    from test_migration import _chat_stream
    ref = reference(0, 80)
    stop = "servers while the answer streams"
    at = ref.index(stop)
    async with EmulatedPair(profile="h200-ngram", time_scale=4.0) as pair:
        pair.register_references({"s": ref})
        gw = await _pair_gateway(gateway_factory, pair)
        migrator = _migrator(gw)
        client = _client(gw)
        run = asyncio.create_task(_chat_stream(client, "s", stream_options={"include_usage": True},
                                               extra_body={"stop": [stop], "min_tokens": 300}))
        seam = -1

        def at_seam() -> bool:
            nonlocal seam
            for live in migrator.live[GROUP]:
                if at + 2 < len(live.join.text) < at + len(stop) - 2:
                    seam = len(live.join.text)
                    _switch(gw, "speculative")
                    return True
            return run.done()

        await until(at_seam, timeout_s=60.0, step_s=0.001)
        chunks, text = await run
        print(f"seam at {seam}, stop at {at}..{at + len(stop)}, client text {len(text)} of {len(ref)} chars, "
              f"finish {[c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]}")
        assert _migrations(gw) == 0 and seam == -1  # stops with min_tokens: never moved, never cut at a seam
        assert len(text) > at + len(stop)  # min_tokens=300 not reached at the stop: vLLM would not stop there
        await client.close()


# --- 8. stream_options the way vLLM reads them: continuous usage only with include_usage (which defaults to true
# when stream_options is given). A movable stream answers differently from the server it stands for (no move needed).
# NB: checked with SPECGATE_MIGRATION=false too: the plain relay gives the same (21, False) for both, so this is the
# gateway's reading of stream_options (`gateway/core/protocol.py` include_usage; per-chunk usage never stripped), not
# the joiner's.

async def _usage_pattern(api: openai.AsyncOpenAI, options: dict[str, Any]) -> tuple[int, bool]:
    stream = await api.chat.completions.create(
        model="specgate-emu", messages=[{"role": "user", "content": "Notes (u)."}], temperature=0, max_tokens=20,
        stream=True, extra_headers={"x-request-id": "u"}, stream_options=options)  # type: ignore[call-overload]
    chunks = [c async for c in stream]
    return sum(1 for c in chunks if c.choices and c.usage is not None), bool(not chunks[-1].choices
                                                                              and chunks[-1].usage)


@pytest.mark.parametrize("options", [{"include_usage": False, "continuous_usage_stats": True},
                                     {"continuous_usage_stats": True}])
async def test_a_movable_stream_reports_usage_as_vllm_does(gateway_factory: Callable[..., Any],
                                                           options: dict[str, Any]) -> None:
    async with EmulatedPair(profile="h200-ngram", time_scale=SCALE) as pair:
        pair.register_references({"u": reference(6, 30)})
        gw = await _pair_gateway(gateway_factory, pair)
        client = _client(gw)
        direct = openai.AsyncOpenAI(base_url=pair.baseline_url + "/v1", api_key="x", max_retries=0)
        via, alone = await _usage_pattern(client, options), await _usage_pattern(direct, options)
        print(f"options {options}: (chunks with usage, final usage event) gateway {via}, server {alone}")
        assert via == alone
        await client.close()
        await direct.close()


# --- 9. a non-streamed request with stream_options: vLLM answers 400 ("Stream options can only be defined when
# `stream=True`"); with migration on the gateway turns it into a stream upstream and answers 200.

async def test_a_non_streamed_request_with_stream_options_is_refused_as_upstream(
        gateway_factory: Callable[..., Any]) -> None:
    async with EmulatedPair(profile="h200-ngram", time_scale=SCALE) as pair:
        pair.register_references({"o": reference(6, 30)})
        gw = await _pair_gateway(gateway_factory, pair)
        body = {"model": "specgate-emu", "messages": [{"role": "user", "content": "x"}], "max_tokens": 5,
                "stream": False, "stream_options": {"include_usage": True}}
        async with ClientSession() as session:
            async with session.post(pair.baseline_url + "/v1/chat/completions", json=body) as resp:
                upstream = resp.status
            async with session.post(gw.url + "/v1/chat/completions", json=body) as resp:
                via = resp.status
        print("upstream:", upstream, "gateway:", via)
        assert via == upstream == 400


# --- 1b. the same request's own failure is blamed on the leaving server: three such streams moved by one switch
# eject it (`record_failure(live.backend, "midstream")` in Migrator.stream), taking it out of rotation for everyone.

async def test_requests_that_cannot_resume_do_not_eject_the_leaving_server(
        gateway_factory: Callable[..., Any]) -> None:
    n = 3
    async with EmulatedPair(profile="h200-ngram", time_scale=SCALE) as pair:
        pair.register_references({f"e{i}": reference(i) for i in range(n)})
        gw = await _pair_gateway(gateway_factory, pair)
        state = gw.app[AppState.key]
        migrator = _migrator(gw)
        client = _client(gw)

        async def one(i: int) -> str | None:
            stream = await client.chat.completions.create(
                model="specgate-emu", messages=[{"role": "user", "content": f"Notes ({i})."}], temperature=0,
                max_tokens=5, max_completion_tokens=300, stream=True, extra_headers={"x-request-id": f"e{i}"})
            try:
                async for _ in stream:
                    pass
            except openai.APIError as exc:
                return str(exc)
            return None

        runs = asyncio.gather(*(one(i) for i in range(n)))
        await until(lambda: len(migrator.live[GROUP]) == n
                    and all(x.join.completion_tokens > 6 for x in migrator.live[GROUP]), 30)
        _switch(gw, "speculative")
        errors = await runs
        baseline = next(b for b in state.pool.backends if b.role == "baseline")
        print("client errors:", errors, "baseline ejected:", not baseline.routable(time.monotonic()),
              "ejections:", baseline.ejections)
        assert errors == [None] * n
        assert baseline.ejections == 0 and baseline.routable(time.monotonic())
        await client.close()


# --- 10. vLLM's completions default `max_tokens` is 16 (CompletionRequest.max_tokens = 16); a resume of a
# completion that gave none leaves it out, so the arriving server grants another 16 (the answer outgrows what the
# unmoved request would give). The emulator serves `limit - prompt` instead, so this is shown on the rule itself.

def test_a_completion_without_max_tokens_resumes_with_vllms_default_budget_left() -> None:
    from gateway.core.migration import resume_body
    body = resume_body(False, {"model": "m", "prompt": "Q: "}, "one two three", 10)
    assert body is not None
    print("resume body:", body)
    assert body.get("max_tokens") == 6


# --- 11. an upstream event whose JSON is not an object (`data: 42`, `data: null`): a plain relay passes it through;
# the migration joiner calls `.get` on it and the AttributeError escapes the relay.

@pytest.mark.parametrize("stream", [True, False])
async def test_a_non_object_upstream_event_does_not_break_the_joined_relay(gateway_factory: Callable[..., Any],
                                                                          stream: bool) -> None:
    def script(_: dict[str, Any], n: int) -> list[bytes]:
        return [_chunk({"role": "assistant", "content": ""}, None, 0), b"data: 42\n\n",
                _chunk({"content": "ok"}, None, 1), _chunk({"content": ""}, "stop", 1)]

    async with _scripted(script, lambda n: False) as (url, _bodies):
        gw = await _one_gpu(gateway_factory, url)
        raw, status = b"", 0
        try:
            async with ClientSession() as session, session.post(gw.url + "/v1/chat/completions", json={
                    "model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}) as resp:
                status = resp.status
                async with asyncio.timeout(10):
                    while chunk := await resp.content.readany():
                        raw += chunk
        except TimeoutError:
            raw += b"<client still waiting after 10 s: the stream neither ends nor errors>"
        print("status", status, "body", raw[-400:])
        assert status == 200
        assert (b"[DONE]" in raw) if stream else (json.loads(raw)["choices"][0]["message"]["content"] == "ok")



# --- 14. metrics by role for a moved request: every token is counted under the role it started on
# (`specgate_output_tokens_total{role}`, duration and TPOT histograms), though the arriving server generated most.

async def test_output_tokens_of_a_moved_stream_are_counted_where_they_were_generated(
        gateway_factory: Callable[..., Any]) -> None:
    from test_migration import _chat_stream
    async with EmulatedPair(profile="h200-ngram", time_scale=SCALE) as pair:
        pair.register_references({"t": reference(2)})
        gw = await _pair_gateway(gateway_factory, pair)
        client = _client(gw)
        started = asyncio.Event()
        run = asyncio.create_task(_chat_stream(client, "t", started, stream_options={"include_usage": True}))
        await asyncio.wait_for(started.wait(), 30)
        _switch(gw, "speculative")
        chunks, _ = await run
        assert _migrations(gw) == 1 and chunks[-1].usage is not None
        state = gw.app[AppState.key]

        def by_role() -> dict[str, float]:
            state.metrics.flush()
            out: dict[str, float] = {}
            for metric in state.metrics.registry.collect():
                for sample in metric.samples:
                    if sample.name == "specgate_output_tokens_total":
                        out[sample.labels["role"]] = out.get(sample.labels["role"], 0.0) + sample.value
            return out

        total = chunks[-1].usage.completion_tokens
        await until(lambda: sum(by_role().values()) >= total, 10)  # the accounting runs after the response
        got = by_role()
        assert got.get("speculative", 0.0) > 0  # most of the answer was generated on the speculative server
        assert sum(got.values()) == total  # each part counted once, where it ran
        await client.close()


# --- 15. a chat moved before any text (only the role chunk, or whitespace so far) is resumed with an empty final
# assistant message and continue_final_message. With transformers' continue_final_message rule (the rendered chat is
# cut after the last occurrence of the final message's stripped text) an empty or whitespace-only message cuts
# nothing: the arriving server sees a *closed* empty assistant turn (Llama-3.1's `...<|end_header_id|>\n\n<|eot_id|>`)
# instead of an open one. Such a stream should stay (or be resumed as a plain request).

@pytest.mark.parametrize("so_far", ["", "\n\n"])
async def test_a_chat_with_no_text_yet_is_not_resumed_as_an_empty_final_message(
        gateway_factory: Callable[..., Any], so_far: str) -> None:
    def script(_: dict[str, Any], n: int) -> list[bytes]:
        first = [_chunk({"role": "assistant", "content": ""}, None, 0)]
        if n == 0:
            return first + ([_chunk({"content": so_far}, None, 1)] if so_far else [])
        return [*first, _chunk({"content": "Hi."}, "stop", 2)]

    async with _scripted(script, lambda n: n == 0) as (url, bodies):
        gw = await _one_gpu(gateway_factory, url)
        migrator = _migrator(gw)
        async with ClientSession() as session, session.post(gw.url + "/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}) as resp:
            await until(lambda: any(x.join.text == so_far and x.join.content_events == (1 if so_far else 0)
                                    for x in migrator.live["gpu"]), 10)
            _switch(gw, "speculative", "gpu")
            moved = any(x.move_to is not None for x in migrator.live["gpu"])
            assert moved == (so_far == "")  # whitespace alone was relayed: a template would trim it, so it stays
            if moved:
                await resp.read()
        if moved:  # nothing relayed yet: sent again as it came, not with an empty final assistant message
            assert bodies[1]["messages"] == [{"role": "user", "content": "hi"}]
            assert "continue_final_message" not in bodies[1]


# --- 16. credentials precedence: `Proxy._attempt` sends the Authorization it forwards (a client's key, client auth
# off) and uses a backend URL's credentials only without one; `Migrator._resume` puts the URL's credentials over it,
# so a resume reaches the servers with other credentials than the request itself. (SPECGATE_UPSTREAM_API_KEY with
# URL credentials is refused by Settings, so this needs the client's forwarded key.)

async def test_a_resume_carries_the_same_credentials_as_the_request(gateway_factory: Callable[..., Any]) -> None:
    seen: list[str | None] = []
    hang = asyncio.Event()

    async def completion(request: web.Request) -> web.StreamResponse:
        seen.append(request.headers.get("Authorization"))
        if request.headers.get("Authorization") != "Bearer k1":
            return web.json_response({"error": {"message": "Unauthorized"}}, status=401)
        n = len(seen)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        await resp.write(_chunk({"role": "assistant", "content": ""}, None, 0))
        await resp.write(_chunk({"content": "Hello"}, None, 1))
        if n == 1:
            await hang.wait()
        await resp.write(_chunk({"content": " again"}, "stop", 2) + b"data: [DONE]\n\n")
        return resp

    up = Upstream(completion)
    url = await up.start()
    creds = url.replace("http://", "http://proxyuser:proxypass@")
    try:
        gw = await _one_gpu(gateway_factory, creds)
        async with ClientSession() as session, session.post(gw.url + "/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True},
                headers={"Authorization": "Bearer k1"}) as resp:
            got = b""
            while b"Hello" not in got:
                got += await resp.content.readany()
            _switch(gw, "speculative", "gpu")
            try:
                while chunk := await resp.content.readany():
                    got += chunk
            except aiohttp.ClientPayloadError:  # the gateway closes the connection after an error event
                got += b"<connection closed>"
        print("Authorization per upstream request:", seen, "client tail:", got[-160:])
        assert len(set(seen)) == 1
        assert b"could not be resumed" not in got
    finally:
        hang.set()
        await up.stop()


# --- 1c. the non-streamed form of 1: the failed resume is blamed on the leaving server in `Migrator.stream`, then the
# proxy retries the request from scratch elsewhere and, that retry served, blames the same server again as a suspect:
# one request, two failures counted against a healthy server.

async def test_a_non_streamed_request_that_cannot_resume_is_not_blamed_on_the_server(
        gateway_factory: Callable[..., Any]) -> None:
    async with EmulatedPair(profile="h200-ngram", time_scale=SCALE) as pair:
        pair.register_references({"q": reference(9)})
        gw = await _pair_gateway(gateway_factory, pair)
        state = gw.app[AppState.key]
        migrator = _migrator(gw)
        client = _client(gw)
        run = asyncio.create_task(client.chat.completions.create(
            model="specgate-emu", messages=[{"role": "user", "content": "Notes (q)."}], temperature=0,
            max_tokens=5, max_completion_tokens=300, extra_headers={"x-request-id": "q"}))
        await until(lambda: any(x.join.completion_tokens > 6 for x in migrator.live[GROUP]), 30)
        _switch(gw, "speculative")
        answer = await run
        baseline = next(b for b in state.pool.backends if b.role == "baseline")
        state.metrics.flush()
        blamed = state.metrics.registry.get_sample_value(
            "specgate_upstream_errors_total", {"backend": baseline.name, "role": "baseline", "reason": "midstream"})
        print("answer tokens:", answer.usage and answer.usage.completion_tokens, "baseline consecutive failures:",
              baseline.consecutive_failures, "midstream errors counted:", blamed)
        assert baseline.consecutive_failures == 0
        await client.close()


def test_a_chat_that_ends_with_an_assistant_turn_is_not_movable() -> None:
    # a resume appends the partial answer as a second assistant message in a row: templates that enforce
    # alternating roles (Mistral, Gemma) refuse it, and the move would end the stream with an error
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello"}]}
    assert not_movable(True, body) == "shape"
    assert not_movable(True, {**body, "messages": body["messages"][:1]}) is None


# --- 12. a movable stream with an event over JOIN_EVENT_MAX turned into a plain relay; the gateway asked its upstream
# for usage on every chunk (continuous_usage_stats), and the plain relay only stripped the usage-only event: every
# later chunk reached a client that asked for no usage with the gateway's own `usage`. Now only the large event itself
# is relayed as it arrives (unread, its own `usage` with it); the events after it are joined again.

async def test_a_stream_past_the_joiners_event_limit_carries_no_usage_the_client_did_not_ask_for(
        gateway_factory: Callable[..., Any]) -> None:
    def script(_: dict[str, Any], n: int) -> list[bytes]:
        big = _chunk({"content": "x" * 100_000}, None, 1)  # one event, arriving in pieces
        return [_chunk({"role": "assistant", "content": ""}, None, 0), big[:40_000], big[40_000:80_000],
                big[80_000:], _chunk({"content": " more"}, None, 2), _chunk({"content": ""}, "stop", 2),
                b'data: {"id":"up-1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],'
                b'"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}\n\n']

    async with _scripted(script, lambda n: False) as (url, bodies):
        gw = await _one_gpu(gateway_factory, url)
        async with ClientSession() as session, session.post(gw.url + "/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}) as resp:
            raw = await resp.read()
        events = [json.loads(line[6:]) for line in raw.split(b"\n") if line.startswith(b"data: {")]
        with_usage = [i for i, e in enumerate(events) if e.get("usage")]
        print("upstream asked for:", bodies[0]["stream_options"], "events with usage at the client:", with_usage,
              "of", len(events))
        # only the large event may carry it, when it came in pieces (before: every event after it too, [1, 2, 3]);
        # the pieces' timing is the network's, so `test_a_large_events_blank_line_split_across_chunks_ends_it` pins it
        assert set(with_usage) <= {1}
        assert raw.endswith(b"data: [DONE]\n\n") and b"x" * 100_000 in raw and b" more" in raw


class _Out:
    """The client side's writes (stands for aiohttp's StreamResponse: only `write` is used)."""

    def __init__(self) -> None:
        self.data = b""

    async def write(self, data: bytes) -> None:
        self.data += data


async def test_a_large_events_blank_line_split_across_chunks_ends_it() -> None:
    from gateway.core.migration import StreamJoin
    from gateway.join_relay import JOIN_EVENT_MAX, JoinRelay
    out = _Out()
    relay = JoinRelay(out, StreamJoin(chat=True, client_usage=False, client_continuous=False), 1 << 22)  # type: ignore[arg-type]
    big = _chunk({"content": "y" * (JOIN_EVENT_MAX + 10)}, None, 1)
    for part in (_chunk({"role": "assistant", "content": ""}, None, 0), big[:-1], big[-1:],
                 _chunk({"content": " after"}, None, 2) + b"data: [DONE]\n\n"):
        await relay.send(part)
    assert big in out.data and relay.join.finished  # relayed whole, as it came; the stream no longer moves
    after = out.data[out.data.index(big) + len(big):]
    assert b" after" in after and b'"usage"' not in after and relay.done  # joined again: usage removed, [DONE] read


def _delta(content: str, finish: str | None = None) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": content}, "finish_reason": finish}]}


@pytest.mark.parametrize(("resumed", "client_after_seam"), [
    (["\n\n", "Next"], "Next"),  # the template trimmed it: the model wrote the whitespace again, dropped
    (["\n", "\nNext"], "Next"),  # ... over two events
    (["Next"], "Next"),  # it did not: nothing to drop
    ([" Next"], " Next"),  # other whitespace: kept (the client has both)
])
def test_whitespace_before_a_seam_is_not_repeated(resumed: list[str], client_after_seam: str) -> None:
    # a chat template that trims the final message (Llama 3's `| trim`) and transformers' continue_final_message cut
    # the resumed prompt before the partial answer's trailing whitespace; so the resume leaves it out, whatever the
    # template, and the joiner drops what the continuation repeats of it
    from gateway.core.migration import StreamJoin, resume_body
    join = StreamJoin(chat=True, client_usage=False, client_continuous=False)
    sent = [o for e in (_delta("Hello"), _delta(" world\n\n")) for o in join.event(e)]
    join.seam()
    body = resume_body(True, {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, join.text, 3)
    assert body is not None and body["messages"][-1]["content"] == "Hello world"
    sent += [o for e in [*map(_delta, resumed), _delta("", "stop")] for o in join.event(e)]
    text = "".join(o["choices"][0]["delta"].get("content") or "" for o in sent)
    assert text == "Hello world\n\n" + client_after_seam and join.text == text


def test_the_tokens_that_only_repeated_the_seams_whitespace_are_not_counted() -> None:
    from gateway.core.migration import StreamJoin

    def counted(content: str, tokens: int, finish: str | None = None) -> dict[str, Any]:
        return {**_delta(content, finish), "usage": {"prompt_tokens": 5, "completion_tokens": tokens}}

    join = StreamJoin(chat=True, client_usage=True, client_continuous=False)
    for event in (counted("Hello", 1), counted(" world\n\n", 2)):
        join.event(event)
    join.seam()
    for event in (counted("\n\n", 1), counted("Next", 2), counted("", 2, "stop")):  # the resumed part's own count
        join.event(event)
    assert join.text == "Hello world\n\nNext" and join.completion_tokens == 3  # as the request never moved
