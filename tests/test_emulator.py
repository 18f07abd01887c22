"""The emulated vLLM pair: wire format, engine-step chunks, acceptance from text, metrics, sharing, aborts."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from gateway.bench.kit.inproc import until
from gateway.emulator import PROFILES, EmulatedPair
from gateway.emulator.drafter import offline_tokens_per_step
from gateway.emulator.text import tokenize

FAST = 0.05  # 20x faster than real time

DOC = (
    "The committee met on Tuesday to review the budget for the new library. After a long discussion, "
    "the members agreed to fund the children's reading room and to postpone the renovation of the "
    "archive until the spring. The chair thanked the volunteers who had organised the book sale."
)
CASES: dict[str, tuple[str, str]] = {
    "json": (
        "Extract the fields name (string), age (integer), city (string) and member (boolean) as JSON from: "
        "Maria Lopez is 34, lives in Valencia and joined the club. Previous example output: "
        '{"name": "John Smith", "age": 41, "city": "Leeds", "member": false}',
        '{"name": "Maria Lopez", "age": 34, "city": "Valencia", "member": true}',
    ),
    "sql": (
        "Schema: CREATE TABLE orders (id INTEGER, customer_id INTEGER, total REAL, created_at TEXT); "
        "CREATE TABLE customers (id INTEGER, name TEXT, country TEXT). Example: SELECT customers.name, "
        "COUNT(orders.id) AS n FROM orders JOIN customers ON orders.customer_id = customers.id GROUP BY "
        "customers.name; Write a query for the total of the orders per customer name in France.",
        "SELECT customers.name, SUM(orders.total) AS total FROM orders JOIN customers ON "
        "orders.customer_id = customers.id WHERE customers.country = 'France' GROUP BY customers.name;",
    ),
    "code_edit": (
        "Rename the variable total to subtotal in this function:\n"
        "def price(items, tax):\n    total = 0\n    for item in items:\n        total += item.price\n"
        "    return total * (1 + tax)\n",
        "def price(items, tax):\n    subtotal = 0\n    for item in items:\n        subtotal += item.price\n"
        "    return subtotal * (1 + tax)\n",
    ),
    "prose": (
        "Write a short, vivid story about a lighthouse keeper who finds a strange bottle.",
        "Salt had crusted the glass so thickly that Ewan almost hurled it back into the surf. Instead he "
        "pried the cork loose with his thumbnail, and a smell of cinnamon and thunder spilled across the "
        "rocks, curling toward the lamp room where his father's ghost still polished brass at midnight.",
    ),
}


def test_tokenizer_round_trips() -> None:
    for text in [DOC, *[p + r for p, r in CASES.values()], "  a\n\n\tb  ", "x=1;y=22_3 ‘é’"]:
        assert "".join(tokenize(text)) == text
    assert tokenize(" hello world") == [" hello", " world"]


@pytest.mark.parametrize("profile", ["h200-ngram", "h200-draft"])
def test_acceptance_from_text(profile: str) -> None:
    copy = offline_tokens_per_step(profile, "Repeat exactly: " + DOC, DOC, 0.0)
    tps = {kind: offline_tokens_per_step(profile, p, r, 0.0) for kind, (p, r) in CASES.items()}
    gamma = PROFILES[profile].gamma
    assert copy > 0.8 * (gamma + 1)  # a copy of the prompt is accepted almost entirely
    assert tps["prose"] < 1.3  # creative prose is not guessable
    for kind in ("json", "sql", "code_edit"):
        assert tps[kind] > tps["prose"] + 0.2, (kind, tps)
    # temperature lowers n-gram acceptance (1 - T/2); the draft model's thins by how sure it is of the text the
    # target wrote, and a copy of the prompt it is sure of (tests/test_emulator_draft.py)
    hot = offline_tokens_per_step(profile, "Repeat exactly: " + DOC, DOC, 1.0)
    assert hot < copy if profile == "h200-ngram" else hot <= copy


async def _stream(
    session: aiohttp.ClientSession, url: str, body: dict[str, Any], request_id: str | None = None
) -> list[dict[str, Any]]:
    headers = {"x-request-id": request_id} if request_id else {}
    out: list[dict[str, Any]] = []
    async with session.post(url, json=body, headers=headers) as r:
        assert r.status == 200, await r.text()
        assert r.headers["Content-Type"].startswith("text/event-stream")
        raw = (await r.read()).decode()
    events = raw.split("\n\n")
    assert events[-2] == "data: [DONE]" and events[-1] == ""
    for ev in events[:-2]:
        assert ev.startswith("data: ")
        out.append(json.loads(ev[6:]))
    return out


def _usage_counts(chunks: list[dict[str, Any]]) -> list[int]:
    """Tokens per token-bearing chunk, from continuous usage stats."""
    counts, prev = [], 0
    for c in chunks:
        if c["choices"]:
            n = c["usage"]["completion_tokens"]
            if n > prev or c["choices"][0].get("finish_reason"):
                counts.append(n - prev)
            prev = n
    return counts


async def test_spec_chunks_are_engine_steps_and_counters_reconcile() -> None:
    async with EmulatedPair(profile="h200-ngram", time_scale=FAST) as pair:
        pair.register_references({f"copy-{i}": DOC for i in range(3)} | {"prose": CASES["prose"][1]})
        body = {"model": "specgate-emu", "prompt": "Repeat exactly: " + DOC, "max_tokens": 200, "temperature": 0,
                "stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
        total_tokens = total_chunks = 0
        gamma = pair.profile.gamma
        async with aiohttp.ClientSession() as s:
            results = await asyncio.gather(
                *(_stream(s, pair.speculative_url + "/v1/completions", body, f"copy-{i}") for i in range(3)),
                _stream(s, pair.speculative_url + "/v1/completions", body | {"prompt": CASES["prose"][0]}, "prose"),
            )
            for chunks in results:
                counts = _usage_counts(chunks)
                assert max(counts) <= gamma + 1
                final = chunks[-1]
                assert final["choices"] == [] and final["usage"]["completion_tokens"] == sum(counts)
                total_tokens += sum(counts)
                total_chunks += len(counts)
            assert max(_usage_counts(results[0])) == gamma + 1  # the copy is accepted in full steps
            text = "".join(c["choices"][0]["text"] for c in results[0] if c["choices"])
            assert text == DOC
            async with s.get(pair.speculative_url + "/metrics") as r:
                metrics = _samples(await r.text())
        accepted = metrics["vllm:spec_decode_num_accepted_tokens_total"]
        drafts = metrics["vllm:spec_decode_num_drafts_total"]
        assert metrics["vllm:generation_tokens_total"] == total_tokens
        assert accepted == total_tokens - total_chunks  # each step yields 1 + accepted tokens
        assert drafts <= total_chunks - len(results)  # the prefill step drafts nothing
        per_pos_name = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
        per_pos = [metrics[f'{per_pos_name}{{position="{i}"}}'] for i in range(gamma)]
        assert sum(per_pos) == accepted and per_pos == sorted(per_pos, reverse=True)
        assert pair.speculative.stats.accepted_tokens == accepted


def _samples(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            labels = {k: v for k, v in s.labels.items() if k not in ("engine", "model_name")}
            key = s.name + ("{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}" if labels else "")
            out[key] = s.value
    return out


async def test_metrics_have_vllm_names_and_baseline_has_no_spec_series() -> None:
    async with EmulatedPair(profile="h200-draft", time_scale=FAST) as pair, aiohttp.ClientSession() as s:
        body = {"model": "specgate-emu", "prompt": DOC, "max_tokens": 8}
        for url in (pair.baseline_url, pair.speculative_url):
            async with s.post(url + "/v1/completions", json=body) as r:
                assert r.status == 200
        texts = {}
        for role, url in (("baseline", pair.baseline_url), ("speculative", pair.speculative_url)):
            async with s.get(url + "/metrics") as r:
                texts[role] = await r.text()
    for role, text in texts.items():
        fams = {f.name: f for f in text_string_to_metric_families(text)}
        for name in ("vllm:num_requests_running", "vllm:num_requests_waiting", "vllm:kv_cache_usage_perc",
                     "vllm:prompt_tokens", "vllm:generation_tokens", "vllm:request_success",
                     "vllm:time_to_first_token_seconds", "vllm:e2e_request_latency_seconds"):
            assert name in fams, (role, name)
        labels = fams["vllm:num_requests_running"].samples[0].labels
        assert labels == {"engine": "0", "model_name": "specgate-emu"}
        success = {s.labels["finished_reason"]: s.value for s in fams["vllm:request_success"].samples
                   if s.name.endswith("_total")}
        assert success["length"] == 1
        has_spec = any(n.startswith("vllm:spec_decode") for n in fams)
        assert has_spec == (role == "speculative")
    positions = [sample.labels["position"] for fam in text_string_to_metric_families(texts["speculative"])
                 if fam.name == "vllm:spec_decode_num_accepted_tokens_per_pos" for sample in fam.samples
                 if sample.name.endswith("_total")]
    assert positions == ["0", "1", "2", "3"]


async def test_usage_and_chat_framing() -> None:
    async with EmulatedPair(time_scale=FAST) as pair, aiohttp.ClientSession() as s:
        pair.register_references({"r": "Hello there, general Kenobi."})
        chat = {"model": "specgate-emu", "messages": [{"role": "user", "content": "Say hi"}], "stream": True,
                "stream_options": {"include_usage": True}, "max_completion_tokens": 50, "temperature": 0}
        for url in (pair.baseline_url, pair.speculative_url):
            chunks = await _stream(s, url + "/v1/chat/completions", chat, "r")
            assert chunks[0]["object"] == "chat.completion.chunk"
            assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
            assert all("usage" not in c for c in chunks[:-1])
            text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
            assert text == "Hello there, general Kenobi."
            assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
            usage = chunks[-1]["usage"]
            n_ref = len(tokenize("Hello there, general Kenobi.")) + 1  # + EOS
            assert chunks[-1]["choices"] == [] and usage["completion_tokens"] == n_ref
            assert usage["total_tokens"] == usage["prompt_tokens"] + n_ref
        # max_tokens caps the reference: finish_reason length
        body = {"model": "specgate-emu", "prompt": "Say hi", "max_tokens": 3, "temperature": 0}
        async with s.post(pair.baseline_url + "/v1/completions", json=body, headers={"x-request-id": "r"}) as r:
            d = await r.json()
        assert d["object"] == "text_completion" and d["choices"][0]["finish_reason"] == "length"
        assert d["choices"][0]["text"] == "Hello there,"
        assert d["usage"]["completion_tokens"] == 3
        # ignore_eos goes past the reference; n > 1; continuous usage without include_usage's final chunk
        body = {"model": "specgate-emu", "prompt": "Say hi", "max_tokens": 12, "ignore_eos": True, "n": 2,
                "unknown_field": {"x": 1}}
        async with s.post(pair.speculative_url + "/v1/completions", json=body, headers={"x-request-id": "r"}) as r:
            d = await r.json()
        assert [c["index"] for c in d["choices"]] == [0, 1]
        assert all(c["finish_reason"] == "length" for c in d["choices"])
        assert d["usage"]["completion_tokens"] == 24
        stream = {"model": "specgate-emu", "prompt": "Say hi", "max_tokens": 5, "stream": True,
                  "stream_options": {"include_usage": False, "continuous_usage_stats": True}}
        chunks = await _stream(s, pair.baseline_url + "/v1/completions", stream)
        assert all("usage" not in c for c in chunks)


async def test_errors_like_vllm() -> None:
    async with EmulatedPair(time_scale=FAST) as pair, aiohttp.ClientSession() as s:
        url = pair.baseline_url
        cases = [
            ("/v1/completions", {"model": "nope", "prompt": "x"}, 404, "NotFoundError"),
            ("/v1/completions", {"model": "specgate-emu", "prompt": "x", "max_tokens": 0}, 400, "BadRequestError"),
            ("/v1/completions", {"prompt": "x", "stream_options": {"include_usage": True}}, 400, "BadRequestError"),
            ("/v1/chat/completions", {"model": "specgate-emu"}, 400, "BadRequestError"),
            ("/v1/completions", {"prompt": "x", "max_tokens": 10**6}, 400, "BadRequestError"),
        ]
        for path, body, status, err_type in cases:
            async with s.post(url + path, json=body) as r:
                assert r.status == status, body
                err = (await r.json())["error"]
                assert err["type"] == err_type and err["code"] == status and "param" in err and err["message"]
        async with s.post(url + "/v1/completions", data=b"{not json") as r:
            assert r.status == 400
        async with s.get(url + "/health") as r:
            assert r.status == 200
        async with s.get(url + "/v1/models") as r:
            assert (await r.json())["data"][0]["id"] == "specgate-emu"
        async with s.get(url + "/version") as r:
            assert "version" in await r.json()
        async with s.post(url + "/emulator/references", json={"references": {"a": "b"}}) as r:
            assert r.status == 200 and pair.references["a"] == "b"
        for bad in ({"x": 0.5}, {"x": "3"}, {"x": True}, ["x"]):
            async with s.post(url + "/emulator/references", json={"references": {}, "acceptance": bad}) as r:
                assert r.status == 400 and "acceptance" in (await r.json())["error"]["message"]
        async with s.post(url + "/emulator/references", json={"references": {}, "acceptance": {"a": 2.5}}) as r:
            assert r.status == 200 and pair.acceptance == {"a": 2.5}


async def test_per_request_synthetic_acceptance_sets_tokens_per_step() -> None:
    """A request registered with tokens per step T (`plan --from`: its class's measured mean) runs at ~T tokens
    a step on the speculative server whatever its text and temperature; other requests keep real drafting."""
    async with EmulatedPair(profile="h200-ngram", time_scale=FAST) as pair, aiohttp.ClientSession() as s:
        pair.register_references({"tilted": DOC, "plain": DOC})
        pair.register_acceptance({"tilted": 3.0})
        body = {"model": "specgate-emu", "prompt": "Write a story.", "max_tokens": 400, "stream": True,
                "temperature": 1.0, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
        tilted, plain = await asyncio.gather(
            _stream(s, pair.speculative_url + "/v1/completions", body, "tilted"),
            _stream(s, pair.speculative_url + "/v1/completions", body, "plain"))
        tokens = tilted[-1]["usage"]["completion_tokens"]
        assert tokens == plain[-1]["usage"]["completion_tokens"] > 40
        assert 2.5 < tokens / len(_usage_counts(tilted)) < 3.5  # ~3 a step, not the ~1 of unpredictable text
        assert max(_usage_counts(plain)) == 1


async def test_abort_on_disconnect_frees_the_slot() -> None:
    async with EmulatedPair(time_scale=FAST) as pair:
        body = {"model": "specgate-emu", "prompt": DOC, "max_tokens": 2000, "ignore_eos": True, "stream": True}
        async with aiohttp.ClientSession() as s:
            async with s.post(pair.speculative_url + "/v1/completions", json=body,
                              headers={"x-request-id": "gone-1"}) as r:
                await r.content.readline()
            # the non-streaming case too
            task = asyncio.create_task(s.post(pair.baseline_url + "/v1/completions", json=body | {"stream": False},
                                              headers={"x-request-id": "gone-2"}))
            requests0 = pair.baseline.stats.requests
            # cancel once its engine holds it: a busy machine takes a while to get there
            await until(lambda: pair.baseline.stats.requests > requests0)
            task.cancel()
        # the server notices the disconnect on its own schedule
        await until(lambda: bool(pair.speculative.stats.aborted and pair.baseline.stats.aborted))
        assert pair.speculative.stats.aborted == ["gone-1"]
        assert pair.baseline.stats.aborted == ["gone-2"]
        assert not pair.speculative.engine.running and not pair.baseline.engine.running
        assert pair.speculative.stats.completed == 0


async def _mean_e2e(s: aiohttp.ClientSession, url: str, n: int) -> float:
    body = {"model": "specgate-emu", "prompt": DOC, "max_tokens": 48, "ignore_eos": True, "temperature": 0}
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        async with s.post(url + "/v1/completions", json=body) as r:
            assert r.status == 200
            await r.read()
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times)


async def test_load_on_one_server_slows_the_other() -> None:
    scale = 0.2
    async with EmulatedPair(profile="h200-ngram", time_scale=scale) as pair, aiohttp.ClientSession() as s:
        alone = await _mean_e2e(s, pair.baseline_url, 3)
        stop = asyncio.Event()

        async def load() -> None:
            while not stop.is_set():
                await _mean_e2e(s, pair.speculative_url, 1)

        loaders = [asyncio.create_task(load()) for _ in range(8)]
        await asyncio.sleep(0.05)
        together = await _mean_e2e(s, pair.baseline_url, 3)
        stop.set()
        await asyncio.gather(*loaders)
    assert together > 1.25 * alone, (alone, together)
    assert pair.gpu.busy_s["speculative"] > 0


async def test_dummy_weights_greedy_output_drafts_sampled_output_does_not() -> None:
    """`--load-format dummy` with synthetic acceptance, as on the H200 run: random weights decoded greedily
    cycle (n-gram lookup drafts, ~synthetic tokens/step); sampled they never repeat (1.00 token/step)."""
    async with EmulatedPair(profile="h200-ngram", time_scale=FAST, synthetic_acceptance_length=3.3,
                            load_format="dummy") as pair, aiohttp.ClientSession() as s:
        pair.register_references({"ref": DOC})  # ignored: random weights do not follow a reference
        body = {"model": "specgate-emu", "prompt": "Repeat exactly: " + DOC, "max_tokens": 160, "stream": True,
                "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
        greedy, sampled = await asyncio.gather(
            _stream(s, pair.speculative_url + "/v1/completions", body | {"temperature": 0}, "ref"),
            _stream(s, pair.speculative_url + "/v1/completions", body | {"temperature": 0.8}, "ref"),
        )
        for chunks in (greedy, sampled):
            assert chunks[-1]["usage"]["completion_tokens"] == 160  # EOS never comes
            assert chunks[-2]["choices"][0]["finish_reason"] == "length"
        greedy_steps, sampled_steps = _usage_counts(greedy), _usage_counts(sampled)
        assert 2.5 < 160 / len(greedy_steps) <= 3.4, greedy_steps
        assert max(sampled_steps) == 1 and len(sampled_steps) == 160
        text = "".join(c["choices"][0]["text"] for c in greedy if c["choices"])
        assert DOC[:40] not in text
