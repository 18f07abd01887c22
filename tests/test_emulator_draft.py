"""The emulated draft model learns the target's distribution from the server's other references (issue 39)."""

from __future__ import annotations

import json
import random

import aiohttp
from prometheus_client.parser import text_string_to_metric_families

from gateway.emulator import EmulatedPair
from gateway.emulator.corpus import learned_model
from gateway.emulator.drafter import offline_tokens_per_step

PROMPT = "Return the order record as a single JSON object with the keys id, status, carrier, items, note."
PROSE = (
    "Salt had crusted the glass so thickly that Ewan almost hurled it back into the surf. Instead he pried the "
    "cork loose with his thumbnail, and a smell of cinnamon and thunder spilled across the rocks, curling toward "
    "the lamp room where his father's ghost still polished brass at midnight."
)


def _record(rng: random.Random) -> str:
    """One answer of a templated class: the same keys in the same order, different values."""
    return json.dumps({
        "id": rng.randrange(1000, 9999), "status": rng.choice(["shipped", "pending", "returned"]),
        "carrier": rng.choice(["ups", "dhl", "fedex"]), "items": [{"sku": f"A{rng.randrange(100)}", "qty": 1}],
        "note": None,
    }, indent=2)


def _references(n: int) -> dict[str, str]:
    rng = random.Random(7)
    return {f"order-{i}": _record(rng) for i in range(n)}


def test_draft_learns_siblings_never_its_own_reference() -> None:
    refs = _references(40)
    own = refs["order-0"]
    alone = offline_tokens_per_step("h200-draft", PROMPT, own, 0.0)
    # its own reference registered is left out: the draft knows exactly what it knew without it
    assert offline_tokens_per_step("h200-draft", PROMPT, own, 0.0, {"order-0": own}) == alone
    learned = offline_tokens_per_step("h200-draft", PROMPT, own, 0.0, refs)
    assert learned > alone + 0.5, (alone, learned)  # the other answers of the class teach it the template
    # a free-text answer gains little from the JSON it learned
    prose = offline_tokens_per_step("h200-draft", "Write a short story.", PROSE, 0.0, refs | {"story": PROSE})
    assert prose < learned - 1.0


def test_leaving_out_subtracts_one_copy() -> None:
    model = learned_model({"a": "x y z", "b": "x y z"})
    assert model.without("x y z").successors((" y",)) == {" z": 1}
    assert model.successors((" y",)) == {" z": 2}


def test_sampling_thins_by_what_the_draft_knows_not_by_temperature_alone() -> None:
    refs = _references(40)
    own = refs["order-0"]
    greedy = offline_tokens_per_step("h200-draft", PROMPT, own, 0.0, refs)
    sampled = offline_tokens_per_step("h200-draft", PROMPT, own, 1.0, refs)
    # the old rule (accept with 1 - T/2 = 0.5) would cut a 4-token run to under 2 tokens a step
    assert sampled <= greedy
    assert sampled > 0.8 * greedy, (greedy, sampled)
    prose_refs = refs | {"story": PROSE}
    prose = offline_tokens_per_step("h200-draft", "Write a short story.", PROSE, 1.0, prose_refs)
    assert prose < 1.3


def test_ngram_is_unchanged_by_references() -> None:
    refs = _references(10)
    for t in (0.0, 1.0):
        base = offline_tokens_per_step("h200-ngram", PROMPT, refs["order-0"], t)
        assert offline_tokens_per_step("h200-ngram", PROMPT, refs["order-0"], t, refs) == base


async def _accepted(refs: dict[str, str], request_id: str) -> float:
    async with EmulatedPair(profile="h200-draft", time_scale=0.02) as pair, aiohttp.ClientSession() as s:
        pair.register_references(refs)
        body = {"model": "specgate-emu", "prompt": PROMPT, "max_tokens": 400, "temperature": 0}
        async with s.post(pair.speculative_url + "/v1/completions", json=body,
                          headers={"x-request-id": request_id}) as r:
            assert r.status == 200
            assert (await r.json())["choices"][0]["text"] == refs[request_id]
        async with s.get(pair.speculative_url + "/metrics") as r:
            text = await r.text()
    return sum(sample.value for fam in text_string_to_metric_families(text)
               if fam.name == "vllm:spec_decode_num_accepted_tokens" for sample in fam.samples
               if sample.name.endswith("_total"))


async def test_emulated_server_drafts_from_its_registered_references() -> None:
    refs = _references(30)
    alone = await _accepted({"order-0": refs["order-0"]}, "order-0")
    with_siblings = await _accepted(refs, "order-0")
    assert with_siblings > alone + 10, (alone, with_siblings)
