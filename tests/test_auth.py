"""Auth and header hygiene: client keys, admin key, upstream key, hop-by-hop headers, body limit."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest

from gateway.bench.kit.fake_vllm import FakeBackend

CHAT = "/v1/chat/completions"
BODY = {"model": "fake-model", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
CLIENT_KEY = "sk-client-0123456789abcdef"
OTHER_KEY = "sk-second-key-fedcba987654"
ADMIN_KEY = "sk-admin-aaaabbbbccccdddd"
UPSTREAM_KEY = "sk-upstream-zzzzyyyyxxxx"
SECRETS = (CLIENT_KEY, OTHER_KEY, ADMIN_KEY, UPSTREAM_KEY)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def assert_openai_error(body: Any, status_type: str) -> None:
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "param", "code"}
    assert body["error"]["type"] == status_type


def assert_no_secret(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


@pytest.fixture
async def secured(gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend]) -> Any:
    base, spec = fakes
    return await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                                 api_keys=[CLIENT_KEY, OTHER_KEY], admin_api_key=ADMIN_KEY,
                                 upstream_api_key=UPSTREAM_KEY, log_requests=True)


@pytest.mark.parametrize("headers", [
    {}, bearer("sk-wrong"), bearer(""), {"Authorization": CLIENT_KEY}, {"Authorization": "Basic " + CLIENT_KEY},
    bearer(CLIENT_KEY + "x"), bearer(CLIENT_KEY[:-1]), {"x-api-key": "nope"},
], ids=["none", "wrong", "empty", "no-scheme", "basic", "longer", "prefix", "x-api-key-wrong"])
async def test_401_openai_shaped_without_or_with_wrong_key(secured: Any, fakes: Any,
                                                           headers: dict[str, str]) -> None:
    async with aiohttp.ClientSession() as s:
        for method, path in (("POST", CHAT), ("POST", "/v1/completions"), ("GET", "/v1/models"),
                             ("GET", "/v1/other"), ("GET", "/nowhere")):
            async with s.request(method, secured.url + path, json=BODY, headers=headers) as r:
                assert r.status == 401, path
                text = await r.text()
                assert_openai_error(await r.json(), "authentication_error")
                assert_no_secret(text + str(dict(r.headers)))
    assert fakes[0].calls == 0 and fakes[1].calls == 0


async def test_200_with_right_key_and_upstream_key_sent(secured: Any, fakes: tuple[FakeBackend, FakeBackend],
                                                        caplog: pytest.LogCaptureFixture) -> None:
    base, _ = fakes
    caplog.set_level(logging.DEBUG)
    async with aiohttp.ClientSession() as s:
        for headers in (bearer(CLIENT_KEY), bearer(OTHER_KEY), {"authorization": "bearer " + CLIENT_KEY},
                        {"x-api-key": OTHER_KEY}):
            for stream in (False, True):
                async with s.post(secured.url + CHAT, json={**BODY, "stream": stream}, headers=headers) as r:
                    text = await r.text()
                    assert r.status == 200, text
                    assert_no_secret(text + str(dict(r.headers)))
        async with s.post(secured.url + CHAT, json=BODY, headers=bearer("sk-wrong-one")) as r:
            assert r.status == 401
    assert len(base.headers) == 8
    for seen in base.headers:
        lowered = {k.lower(): v for k, v in seen.items()}
        assert lowered["authorization"] == f"Bearer {UPSTREAM_KEY}"  # the upstream key, never the client's
        assert "x-api-key" not in lowered
        assert CLIENT_KEY not in str(seen) and OTHER_KEY not in str(seen)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "sk-wrong-one" not in logged
    assert_no_secret(logged)


async def test_openai_sdk_with_api_key(secured: Any) -> None:
    client = openai.AsyncOpenAI(base_url=secured.url + "/v1", api_key=CLIENT_KEY, max_retries=0, timeout=10)
    done = await client.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    assert done.choices[0].message.content
    chunks = [c async for c in await client.chat.completions.create(
        model="fake-model", messages=[{"role": "user", "content": "hi"}], stream=True)]
    assert chunks
    bad = openai.AsyncOpenAI(base_url=secured.url + "/v1", api_key="sk-nope", max_retries=0, timeout=10)
    with pytest.raises(openai.AuthenticationError) as info:
        await bad.chat.completions.create(model="fake-model", messages=[{"role": "user", "content": "hi"}])
    assert info.value.status_code == 401
    await client.close()
    await bad.close()


async def test_probes_stay_open(secured: Any) -> None:
    async with aiohttp.ClientSession() as s:
        for path in ("/health", "/ready", "/metrics"):
            async with s.get(secured.url + path) as r:
                assert r.status == 200, path
                assert_no_secret(await r.text())


async def test_admin_needs_admin_key_and_config_is_redacted(secured: Any) -> None:
    async with aiohttp.ClientSession() as s:
        for path in ("/admin/state", "/admin/config"):
            for headers in ({}, bearer(CLIENT_KEY), bearer("sk-wrong")):
                async with s.get(secured.url + path, headers=headers) as r:
                    assert r.status == 401, (path, headers)
                    assert_openai_error(await r.json(), "authentication_error")
            async with s.get(secured.url + path, headers=bearer(ADMIN_KEY)) as r:
                assert r.status == 200
                text = await r.text()
                assert_no_secret(text)
        async with s.get(secured.url + "/admin/config", headers=bearer(ADMIN_KEY)) as r:
            config = await r.json()
    assert config["api_keys"] == ["**********", "**********"]
    assert config["admin_api_key"] == "**********"
    assert config["upstream_api_key"] == "**********"


async def test_admin_key_defaults_to_client_keys(gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend]
                                                 ) -> None:
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], api_keys=[CLIENT_KEY])
    async with aiohttp.ClientSession() as s:
        async with s.get(gw.url + "/admin/config") as r:
            assert r.status == 401
        async with s.get(gw.url + "/admin/config", headers=bearer(CLIENT_KEY)) as r:
            assert r.status == 200
            assert_no_secret(await r.text())


async def test_api_keys_file(gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend], tmp_path: Path) -> None:
    base, spec = fakes
    keys = tmp_path / "keys"
    keys.write_text(f"# team a\n{CLIENT_KEY}  # ci\n\n   {OTHER_KEY}\n")
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], api_keys_file=keys)
    async with aiohttp.ClientSession() as s:
        for key, status in ((CLIENT_KEY, 200), (OTHER_KEY, 200), ("# team a", 401), ("", 401)):
            async with s.post(gw.url + CHAT, json=BODY, headers=bearer(key)) as r:
                assert r.status == status, key


async def test_no_auth_forwards_client_authorization(gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend]
                                                     ) -> None:
    """With gateway auth off and no upstream key, the client's own key is the backend's business."""
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline")
    async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json=BODY, headers=bearer("sk-for-vllm")) as r:
        assert r.status == 200
    assert {k.lower(): v for k, v in base.headers[-1].items()}["authorization"] == "Bearer sk-for-vllm"


HOP_REQUEST = {"Keep-Alive": "timeout=5", "TE": "trailers", "Trailer": "x-t", "Proxy-Authorization": "Basic eA==",
               "Proxy-Connection": "keep-alive"}
HOP_RESPONSE = {"Keep-Alive": "timeout=99", "Proxy-Authenticate": "Basic", "Trailer": "x-t",
                "Proxy-Connection": "close", "X-Upstream-Kept": "yes"}


@pytest.mark.parametrize("migration", [False, True])
async def test_hop_by_hop_headers_stripped_both_ways(gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend],
                                                     migration: bool) -> None:
    """With live migration a non-streamed request is joined from an upstream stream: its answer keeps the upstream's
    end-to-end headers all the same (before 2026-12-06 n the joined answer dropped them)."""
    base, spec = fakes
    base.response_headers = dict(HOP_RESPONSE)
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               migration=migration)
    async with aiohttp.ClientSession() as s:
        for stream in (False, True):
            headers = {**HOP_REQUEST, "X-Client-Kept": "yes"}
            async with s.post(gw.url + CHAT, json={**BODY, "stream": stream}, headers=headers) as r:
                await r.read()
                assert r.status == 200
                got = {k.lower() for k in r.headers}
                assert r.headers["X-Upstream-Kept"] == "yes"
                for name in HOP_RESPONSE:
                    if name != "X-Upstream-Kept":
                        assert name.lower() not in got, name
    for seen in base.headers:
        lowered = {k.lower(): v for k, v in seen.items()}
        assert lowered["x-client-kept"] == "yes"
        for name in HOP_REQUEST:
            assert name.lower() not in lowered, name


async def test_headers_named_in_connection_are_stripped(gateway_factory: Any,
                                                        fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline")
    async with aiohttp.ClientSession() as s, s.post(
            gw.url + CHAT, json=BODY, headers={"Connection": "keep-alive, X-Hop-Secret", "X-Hop-Secret": "s"}) as r:
        assert r.status == 200
    assert "x-hop-secret" not in {k.lower() for k in base.headers[-1]}


async def test_413_for_oversize_body(gateway_factory: Any, fakes: tuple[FakeBackend, FakeBackend]) -> None:
    base, spec = fakes
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], max_body_bytes=2048)
    big = {**BODY, "messages": [{"role": "user", "content": "x" * 4096}]}
    async with aiohttp.ClientSession() as s:
        async with s.post(gw.url + CHAT, json=big) as r:
            assert r.status == 413
            body = await r.json()
            assert_openai_error(body, "invalid_request_error")
            assert body["error"]["code"] == "request_too_large"

        async def chunked() -> Any:
            yield b'{"model": "fake-model", "prompt": "'
            for _ in range(8):
                yield b"y" * 1024
            yield b'"}'

        async with s.post(gw.url + "/v1/completions", data=chunked(),
                          headers={"Content-Type": "application/json"}) as r:
            assert r.status == 413
        async with s.post(gw.url + "/v1/other", data=b"z" * 4096) as r:
            assert r.status == 413
        async with s.post(gw.url + CHAT, json=BODY) as r:  # still serving
            assert r.status == 200
    assert base.calls + spec.calls == 1


async def test_client_request_id_cannot_forge_log_fields(gateway_factory: Any,
                                                         fakes: tuple[FakeBackend, FakeBackend],
                                                         caplog: pytest.LogCaptureFixture) -> None:
    import json

    base, spec = fakes
    base.mode, base.status = "status", 503
    gw = await gateway_factory(baseline_urls=[base.url], speculative_urls=[spec.url], policy="baseline",
                               eject_consecutive_failures=100)
    forged = 'x", "event": "admin_login", "user": "root'
    caplog.set_level(logging.INFO)
    async with aiohttp.ClientSession() as s, s.post(gw.url + CHAT, json=BODY, headers={"x-request-id": forged}) as r:
        assert r.status == 200
    lines = [rec.getMessage() for rec in caplog.records if rec.name.startswith("specgate")]
    assert lines, "expected a failover warning"
    for line in lines:
        if line.startswith("{"):
            parsed = json.loads(line)
            assert parsed.get("event") != "admin_login" and "user" not in parsed, line


@pytest.mark.parametrize(("path", "header"), [
    pytest.param(CHAT, b"Authorization: Bearer \xff\xfe"),
    pytest.param(CHAT, b"x-api-key: \xff"),
    pytest.param("/admin/config", b"Authorization: Bearer \xc3("),
    (CHAT, "Authorization: Bearer k\u00e9y".encode()),
    (CHAT, b"Authorization: Bearer"),
    (CHAT, b"Authorization: bearer   "),
], ids=["bearer-ff", "x-api-key-ff", "admin-bad-utf8", "utf8", "bare-scheme", "blank"])
async def test_odd_key_bytes_give_401_not_500(secured: Any, path: str, header: bytes) -> None:
    import asyncio

    host, port = secured.url.removeprefix("http://").split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    payload = b'{"model": "fake-model", "prompt": "x"}'
    method = b"GET " if path.startswith("/admin") else b"POST "
    writer.write(method + path.encode() + b" HTTP/1.1\r\nHost: x\r\n" + header + b"\r\nConnection: close\r\n"
                 b"Content-Type: application/json\r\nContent-Length: " + str(len(payload)).encode() + b"\r\n\r\n"
                 + payload)
    answer = await asyncio.wait_for(reader.read(-1), 5)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 401 "), answer[:200]


def test_keys_from_environment_are_parsed_and_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.settings import Settings

    monkeypatch.setenv("SPECGATE_API_KEYS", f" {CLIENT_KEY} ,{OTHER_KEY},")
    monkeypatch.setenv("SPECGATE_ADMIN_API_KEY", ADMIN_KEY)
    monkeypatch.setenv("SPECGATE_UPSTREAM_API_KEY", UPSTREAM_KEY)
    settings = Settings()
    assert settings.client_keys() == [CLIENT_KEY.encode(), OTHER_KEY.encode()]
    assert_no_secret(repr(settings) + str(settings) + str(settings.redacted()))
