"""The emulator's prefix cache keeps the full blocks of generated tokens, as vLLM's does: a conversation's
next turn hits its own history (the last prompt and the reply), not only the last prompt."""

from __future__ import annotations

import re

from openai import AsyncOpenAI

from gateway.bench.kit.procs import fetch_text
from gateway.emulator import EmulatedFleet
from gateway.emulator.prefix_cache import PrefixCache, block_hashes, output_block_hashes
from gateway.emulator.text import tokenize
from gateway.emulator.wire import chat_prompt

SYSTEM = "You are a helpful assistant who answers questions about the Python standard library. " * 3
REPLY = ("The json module encodes Python objects as JSON text and decodes JSON text back into Python objects. "
         "Use json.dumps to produce a string, json.dump to write to a file, and json.loads to parse a string; "
         "pass indent for pretty output and sort_keys for a stable order of the keys in every object.")


def _turns() -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    first = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "What does the json module do?"}]
    second = [*first, {"role": "assistant", "content": REPLY}, {"role": "user", "content": "And pickle?"}]
    return first, second


def test_the_reply_blocks_chain_into_the_next_turns_prompt() -> None:
    first, second = _turns()
    chain = block_hashes(tokenize(chat_prompt(first)), 16)
    reply = output_block_hashes(chain, tokenize(REPLY), 16)
    following = block_hashes(tokenize(chat_prompt(second)), 16)
    assert len(reply) >= 3
    assert following[: len(chain) + len(reply)] == [*chain, *reply]
    # a completion prompt is followed by the reply as it is (no template between them)
    prompt, body = "def add(a, b):\n    return a + b\n\n" * 4 + "def sub(a, b):", "\n    return a - b\n" * 4
    chain = block_hashes(tokenize(prompt), 16)
    reply = output_block_hashes(chain, tokenize(body), 16)
    assert len(reply) >= 1
    assert block_hashes(tokenize(prompt + body), 16)[: len(chain) + len(reply)] == [*chain, *reply]


def _hits(metrics: str) -> float:
    match = re.search(r"^vllm:prefix_cache_hits_total\{[^}]*\} ([0-9.e+]+)$", metrics, re.M)
    assert match, "no prefix cache hit counter"
    return float(match.group(1))


async def test_a_conversations_next_turn_hits_its_own_reply() -> None:
    first, second = _turns()
    async with EmulatedFleet(["baseline"], time_scale=0.05) as fleet:
        fleet.register_references({"turn-1": REPLY})
        url = fleet.servers[0].url
        client = AsyncOpenAI(base_url=url + "/v1", api_key="unused")
        r1 = await client.chat.completions.create(model="specgate-emu", messages=first, max_tokens=256,  # type: ignore[arg-type]
                                                  temperature=0, extra_headers={"x-request-id": "turn-1"})
        assert r1.choices[0].message.content == REPLY
        before = _hits(await fetch_text(url + "/metrics"))
        await client.chat.completions.create(model="specgate-emu", messages=second, max_tokens=16,  # type: ignore[arg-type]
                                             temperature=0, extra_headers={"x-request-id": "turn-2"})
        hits = _hits(await fetch_text(url + "/metrics")) - before
        await client.close()
    prompt_1 = len(tokenize(chat_prompt(first)))
    history = prompt_1 + len(tokenize(" " + REPLY))
    assert hits > prompt_1 + 16  # past the first prompt: the reply's blocks were cached
    assert hits >= history - history % 16 - 16


def test_under_pressure_a_prompt_loses_its_tail_first_as_in_vllm() -> None:
    """vLLM frees a request's blocks in reverse ("so that the tail blocks are evicted first"): a cached prompt
    squeezed by newer ones keeps its head, which its next turn still hits. Evicting from the head (the emulator
    before) lost the whole prompt at the first eviction, since a hit needs the leading blocks."""
    cache = PrefixCache(capacity=10)
    old = list(range(100, 108))  # a prompt of 8 blocks
    cache.insert(old)
    cache.insert(list(range(200, 204)))  # a newer prompt of 4 blocks: 2 of the old prompt's must go
    assert cache.hit_blocks(old) == 6  # head kept, the two tail blocks evicted
    assert cache.hit_blocks(list(range(200, 204))) == 4
