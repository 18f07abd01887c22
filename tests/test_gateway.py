"""The gateway end to end: the official openai SDK as client, real loopback backends, every error case."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import aiohttp
import openai
import pytest

from gateway.bench.kit.fake_vllm import FakeBackend, FakePair
from gateway.bench.kit.inproc import GatewayFactory, RunningGateway

pytestmark = pytest.mark.asyncio


async def gateway_for(gateway_factory: GatewayFactory, fakes: FakePair, **kw: Any) -> RunningGateway:
    base, spec = fakes
    return await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], **kw)


async def test_openai_sdk_async_chat_and_completions(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    gw = await gateway_for(gateway_factory, fakes, policy="baseline")
    client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0)
    chat = await client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    assert chat.choices[0].message.content and chat.usage and chat.usage.completion_tokens == 5
    comp = await client.completions.create(model="fake-model", prompt="Once", max_tokens=5)
    assert comp.choices[0].text.startswith("tok")
    stream = await client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}],
                                                  stream=True)
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == "tok " * 5
    stream2 = await client.completions.create(model="fake-model", prompt="x", stream=True,
                                              stream_options={"include_usage": True})
    chunks = [c async for c in stream2]
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 5
    await client.close()


async def test_openai_sdk_sync_client(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    gw = await gateway_for(gateway_factory, fakes)

    def run() -> tuple[str, list[str]]:
        client = openai.OpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0)
        full = client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
        parts = [c.choices[0].text for c in client.completions.create(model="fake-model", prompt="x", stream=True)
                 if c.choices]
        return full.choices[0].message.content or "", parts

    content, parts = await asyncio.to_thread(run)
    assert content and "".join(parts).startswith("tok")


async def test_headers_reason_and_unknown_fields_forwarded(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    _, spec = fakes
    gw = await gateway_for(gateway_factory, fakes, policy="rules")
    client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0)
    raw = await client.chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": "Return JSON with keys a and b"}], temperature=0,
        response_format={"type": "json_object"}, extra_body={"top_k": 7, "guided_json": {"type": "object"}},
        extra_headers={"x-request-id": "req-42"})
    assert raw.headers["x-specgate-backend"] == "speculative"
    assert raw.headers["x-specgate-class"] == "structured"
    assert raw.headers["x-specgate-reason"] == "rule_structured"
    assert raw.headers["x-request-id"] == "req-42"
    sent = spec.bodies[-1]
    assert sent["top_k"] == 7 and sent["guided_json"] == {"type": "object"}
    assert spec.headers[-1]["x-request-id"] == "req-42"
    raw = await client.chat.completions.with_raw_response.create(
        model="fake-model", messages=[{"role": "user", "content": "hi"}], n=2)
    assert (raw.headers["x-specgate-backend"], raw.headers["x-specgate-reason"]) == ("baseline", "n_gt_1")
    await client.close()


async def test_stream_relay_keeps_framing_and_strips_injected_usage(
        gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    base, _ = fakes
    gw = await gateway_for(gateway_factory, fakes, policy="baseline")
    async with aiohttp.ClientSession() as s:
        body = {"model": "fake-model", "prompt": "x", "stream": True}
        async with s.post(gw.url + "/v1/completions", json=body) as r:
            assert r.headers["Cache-Control"] == "no-cache" and r.headers["X-Accel-Buffering"] == "no"
            raw = await r.read()
        assert raw.endswith(b"data: [DONE]\n\n")
        assert b'"usage"' not in raw  # the gateway asked upstream for usage; the client did not
        # live migration (on by default on a pair) also asks for usage on every chunk: the tokens a resume needs
        assert base.bodies[-1]["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
        body["stream_options"] = {"include_usage": True}
        async with s.post(gw.url + "/v1/completions", json=body) as r:
            raw = await r.read()
        assert raw.count(b'"usage"') == 1 and raw.endswith(b"data: [DONE]\n\n")


async def test_stream_is_relayed_as_it_arrives(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    base, _ = fakes
    base.chunks, base.chunk_delay_s = 4, 0.15
    gw = await gateway_for(gateway_factory, fakes, policy="baseline")
    arrivals = []
    async with aiohttp.ClientSession() as s, s.post(gw.url + "/v1/completions",
                                                    json={"model": "m", "prompt": "x", "stream": True}) as r:
        t0 = time.monotonic()
        async for _ in r.content.iter_any():
            arrivals.append(time.monotonic() - t0)
    assert len(arrivals) >= 4 and arrivals[0] < 0.3 and arrivals[-1] > 0.45


BAD = [
    (b"{not json", 400, None),
    (b"[1, 2]", 400, None),
    (b'{"messages": [{"role": "user", "content": "hi"}]}', 400, "model"),
    (b'{"model": "m", "messages": "hi"}', 400, "messages"),
    (b'{"model": "m", "messages": []}', 400, "messages"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": "hot"}', 400, "temperature"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "temperature": 9}', 400, "temperature"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": "5"}', 400, "max_tokens"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 0}', 400, "max_tokens"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": "yes"}', 400, "stream"),
    (b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "n": 1.5}', 400, "n"),
    (b'{"model": 5, "prompt": "x"}', 400, "model"),
]


@pytest.mark.parametrize(("body", "status", "param"), BAD)
async def test_bad_requests_get_openai_errors(gateway_factory: GatewayFactory, fakes: FakePair, body: bytes,
                                              status: int, param: str | None) -> None:
    base, spec = fakes
    gw = await gateway_for(gateway_factory, fakes)
    async with aiohttp.ClientSession() as s, s.post(gw.url + "/v1/chat/completions", data=body,
                                                    headers={"Content-Type": "application/json"}) as r:
        data = await r.json()
    assert r.status == status
    assert set(data["error"]) == {"message", "type", "param", "code"}
    assert data["error"]["type"] == "invalid_request_error" and data["error"]["param"] == param
    assert not base.bodies and not spec.bodies


async def test_prompt_type_and_oversize_body(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    gw = await gateway_for(gateway_factory, fakes, max_body_bytes=2048)
    async with aiohttp.ClientSession() as s:
        async with s.post(gw.url + "/v1/completions", json={"model": "m", "prompt": {"a": 1}}) as r:
            assert r.status == 400 and (await r.json())["error"]["param"] == "prompt"
        async with s.post(gw.url + "/v1/completions", json={"model": "m", "prompt": "x" * 5000}) as r:
            err = (await r.json())["error"]
            assert r.status == 413 and err["code"] == "request_too_large"


async def test_no_healthy_backend_is_503(gateway_factory: GatewayFactory) -> None:
    gw = await gateway_factory(baseline_urls=["http://127.0.0.1:9"], speculative_urls=["http://127.0.0.1:9"])
    await asyncio.sleep(0.4)  # health checks fail
    async with aiohttp.ClientSession() as s:
        async with s.post(gw.url + "/v1/completions", json={"model": "m", "prompt": "x"}) as r:
            err = (await r.json())["error"]
            assert r.status == 503 and err["type"] == "server_error" and err["code"] == "no_healthy_backend"
        async with s.get(gw.url + "/ready") as r:
            assert r.status == 503
        async with s.get(gw.url + "/health") as r:
            assert r.status == 200


async def test_upstream_error_passes_through(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    base, spec = fakes
    base.mode = spec.mode = "status"
    base.status = spec.status = 500
    gw = await gateway_for(gateway_factory, fakes, max_attempts=2)
    body = {"model": "m", "prompt": "x"}
    async with aiohttp.ClientSession() as s, s.post(gw.url + "/v1/completions", json=body) as r:
        data = await r.json()
    assert r.status == 500 and data["error"]["message"] == "injected"
    assert base.calls + spec.calls == 2  # retried once on the other backend, then passed through


async def test_upstream_4xx_is_not_retried(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    base, spec = fakes
    base.mode = spec.mode = "status"
    base.status = spec.status = 404
    gw = await gateway_for(gateway_factory, fakes, policy="baseline")
    body = {"model": "m", "prompt": "x"}
    async with aiohttp.ClientSession() as s, s.post(gw.url + "/v1/completions", json=body) as r:
        assert r.status == 404 and (await r.json())["error"]["message"] == "injected"
    assert base.calls == 1 and spec.calls == 0


async def test_upstream_dies_mid_stream(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    base, _ = fakes
    base.mode, base.chunks = "truncate", 6
    gw = await gateway_for(gateway_factory, fakes, policy="baseline")
    async with aiohttp.ClientSession() as s, s.post(gw.url + "/v1/completions",
                                                    json={"model": "m", "prompt": "x", "stream": True}) as r:
        assert r.status == 200
        with pytest.raises(aiohttp.ClientPayloadError):
            await r.read()
        raw = (r.content._buffer and b"".join(r.content._buffer)) or b""
    events = [e for e in raw.split(b"\n\n") if e]
    assert not events or b"[DONE]" not in raw


async def test_mid_stream_error_event(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    base, _ = fakes
    base.mode, base.chunks = "truncate", 6
    gw = await gateway_for(gateway_factory, fakes, policy="baseline")
    got = b""
    async with aiohttp.ClientSession() as s, s.post(gw.url + "/v1/completions",
                                                    json={"model": "m", "prompt": "x", "stream": True}) as r:
        try:
            async for chunk in r.content.iter_any():
                got += chunk
        except aiohttp.ClientPayloadError:
            pass
    assert b'data: {"error":' in got and b"upstream_stream_error" in got and b"[DONE]" not in got
    assert got.count(b'"tok ') == 3


async def test_client_disconnect_aborts_upstream(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    base, _ = fakes
    base.chunks, base.chunk_delay_s = 50, 0.05
    gw = await gateway_for(gateway_factory, fakes, policy="baseline")
    async with aiohttp.ClientSession() as s:
        r = await s.post(gw.url + "/v1/completions", json={"model": "m", "prompt": "x", "stream": True},
                         headers={"x-request-id": "leaver"})
        await r.content.readany()
        closed_at = time.monotonic()
        r.close()
    for _ in range(40):
        if base.aborted:
            break
        await asyncio.sleep(0.01)
    assert base.aborted and base.aborted[0][0] == "leaver"
    assert base.aborted[0][1] - closed_at < 0.2


async def test_models_merged_and_passthrough(gateway_factory: GatewayFactory) -> None:
    a, b, c = (FakeBackend(model=name, aliases=()) for name in ("m1", "m1", "m2"))
    for f in (a, b, c):
        await f.start()
    try:
        gw = await gateway_factory(baseline_urls=[a.url, c.url], speculative_urls=[b.url])
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0)
        ids = sorted(m.id for m in (await client.models.list()).data)
        assert ids == ["m1", "m2"]
        await client.close()
        async with aiohttp.ClientSession() as s, s.post(gw.url + "/v1/embeddings", json={"input": "x"}) as r:
            assert r.status == 200 and (await r.json())["path"] == "/v1/embeddings"
            assert r.headers["x-specgate-backend"] == "baseline"
    finally:
        for f in (a, b, c):
            await f.stop()


async def test_metrics_present_and_moving(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    gw = await gateway_for(gateway_factory, fakes, policy="speculative")
    async with aiohttp.ClientSession() as s:
        for stream in (False, True, True):
            async with s.post(gw.url + "/v1/chat/completions", json={
                    "model": "m", "messages": [{"role": "user", "content": "Return JSON"}], "stream": stream}) as r:
                await r.read()
        await asyncio.sleep(0.5)
        async with s.get(gw.url + "/metrics") as r:
            text = await r.text()
    want = [
        'specgate_requests_total{backend="speculative-0",class="structured",role="speculative",status="200"} 3.0',
        'specgate_decisions_total{class="structured",reason="static",role="speculative"} 3.0',
        'specgate_output_tokens_total{class="structured",role="speculative"} 45.0',
        'specgate_time_to_first_token_seconds_count{class="structured",role="speculative"} 3.0',
        'specgate_request_duration_seconds_count{class="structured",role="speculative"} 3.0',
        'specgate_backend_up{backend="baseline-0",role="baseline"} 1.0',
        'specgate_inflight_requests{backend="speculative-0",role="speculative"} 0.0',
        'specgate_gateway_overhead_seconds_count 3.0',
    ]
    for line in want:
        assert line in text, line
    async with aiohttp.ClientSession() as s:  # scraped spec counters move once a request lands between scrapes
        for _ in range(20):
            async with s.post(gw.url + "/v1/completions", json={"model": "m", "prompt": "x"}) as r:
                await r.read()
            await asyncio.sleep(0.15)
            async with s.get(gw.url + "/metrics") as r:
                text = await r.text()
            if 'specgate_backend_acceptance_rate{backend="speculative-0",role="speculative"} 0.5' in text:
                break
    assert 'specgate_backend_acceptance_rate{backend="speculative-0",role="speculative"} 0.5' in text
    assert 'specgate_backend_mean_acceptance_length{backend="speculative-0",role="speculative"} 3.0' in text
    assert "specgate_inter_chunk_seconds_count" in text


async def test_admin_endpoints(gateway_factory: GatewayFactory, fakes: FakePair) -> None:
    gw = await gateway_for(gateway_factory, fakes, upstream_api_key="sk-upstream-secret")
    async with aiohttp.ClientSession() as s:
        async with s.get(gw.url + "/admin/state") as r:
            state = await r.json()
        async with s.get(gw.url + "/admin/config") as r:
            raw = await r.text()
    assert state["policy"] == "adaptive" and "step_models" in state["learner"]
    assert "sk-upstream-secret" not in raw and '"upstream_api_key":"**********"' in raw
