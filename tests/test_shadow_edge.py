"""Shadow prompt lookup at the edge: the text of real streams and answers, the replay's rate and calibration share,
and a structured class that gets acceptance evidence for the n-gram server while only the baseline serves it."""

from __future__ import annotations

from typing import Any

import aiohttp
import openai
import orjson
import pytest

from gateway.bench.kit.inproc import GatewayFactory, RunningGateway, until
from gateway.core.learner import Learner
from gateway.emulator import EmulatedPair
from gateway.settings import Settings
from gateway.shadow import Shadow, answer_text, prompt_text, replay_charge, stream_text
from gateway.state import AppState

KNOWN = (" the first published algorithm intended for the Analytical Engine, a general-purpose mechanical computer"
         " proposed by Charles Babbage, and notes that saw beyond calculation to music and symbols")
RECORD = f"Name: Ada Lovelace\nBorn: 10 December 1815, London\nKnown for:{KNOWN}\n"
ANSWER = f'{{"name": "Ada Lovelace", "born": "10 December 1815", "known_for":{KNOWN}"}}'


def _events(*objs: object) -> bytes:
    return b"".join(b"data: " + orjson.dumps(o) + b"\n\n" for o in objs) + b"data: [DONE]\n\n"


def test_text_of_streams_answers_and_prompts() -> None:
    chat = _events({"choices": [{"delta": {"role": "assistant", "content": ""}}]},
                   {"choices": [{"delta": {"content": "Hel"}}]}, {"choices": [{"delta": {"content": "lo"}}]},
                   {"choices": [], "usage": {"completion_tokens": 2}})
    assert stream_text(chat, chat=True) == "Hello"
    assert stream_text(_events({"choices": [{"text": "a"}]}, {"choices": [{"text": "b"}]}), chat=False) == "ab"
    assert answer_text(orjson.dumps({"choices": [{"message": {"content": "x y"}}]}), chat=True) == "x y"
    body = {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": [{"type": "text",
                                                                                          "text": "U"}]}]}
    assert prompt_text(orjson.dumps(body), chat=True) == "S\nU"
    assert prompt_text(orjson.dumps({"prompt": "P"}), chat=False) == "P"
    assert prompt_text(b"not json", chat=False) is None


def test_replays_are_rate_limited_and_a_share_of_speculative_responses_calibrates() -> None:
    shadow = Shadow(Settings(shadow_lookup=True, shadow_rate_per_s=1.0, shadow_calibration_share=0.5),
                    Learner(Settings().learner_config()))
    assert shadow.capture("baseline", now=100.0) is not None
    assert shadow.capture("baseline", now=100.1) is None  # the bucket holds one replay a second
    assert shadow.capture("baseline", now=101.2) is not None
    picked = [shadow.capture("speculative", now=200.0 + 2 * i) is not None for i in range(6)]
    assert picked == [False, True] * 3


def test_a_replay_of_a_long_prompt_counts_once_per_4096_tokens_it_searches() -> None:
    """A replay's work grows with the prompt it searches (up to SPECGATE_SHADOW_MAX_PROMPT_TOKENS): the rate's budget
    is charged by it, so a long-context flood replays fewer responses, not more CPU."""
    assert [replay_charge(n, 16384) for n in (0, 4096, 4097, 16384, 100_000)] == [1, 1, 2, 4, 4]
    shadow = Shadow(Settings(shadow_lookup=True, shadow_rate_per_s=4.0), Learner(Settings().learner_config()))
    body = orjson.dumps({"messages": [{"role": "user", "content": RECORD}]})
    assert shadow.capture("baseline", now=100.0) is not None
    shadow.observe("baseline", body, True, orjson.dumps({"choices": [{"message": {"content": ANSWER}}]}), False,
                   "extraction_json", "greedy", None, 40, prompt_tokens=12_000, family=None, temperature=0.0)
    assert shadow.capture("baseline", now=100.0) is not None  # 4 in the bucket, 3 charged: one left
    assert shadow.capture("baseline", now=100.0) is None


@pytest.mark.parametrize("migration", [False, True])
async def test_a_structured_class_gets_shadow_acceptance_while_only_the_baseline_serves_it(
        gateway_factory: GatewayFactory, migration: bool) -> None:
    """With live migration on, a shared GPU's answers are joined from a stream that may move (`gateway.migrate`):
    they are replayed all the same. Before 2026-12-06 n they were not, the idle n-gram server never got acceptance
    evidence, and the Azure code burst never entered speculation (1.065x the better static, 0% to speculation).
    A json_object answer never moves, so the movable requests here ask for none."""
    fmt: dict[str, Any] = {} if migration else {"response_format": {"type": "json_object"}}
    async with EmulatedPair(profile="h200-ngram", time_scale=0.05) as pair:
        pair.register_references({f"s{i}": ANSWER for i in range(4)})
        gw: RunningGateway = await gateway_factory(
            baseline_urls=[pair.baseline_url], speculative_urls=[pair.speculative_url], policy="baseline",
            shadow_lookup=True, shadow_default_ratio=0.5, migration=migration)
        state = gw.app[AppState.key]
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0, timeout=60)
        for i in range(3):
            raw = await client.chat.completions.with_raw_response.create(
                model="specgate-emu", messages=[{"role": "user", "content": "Extract as JSON:\n" + RECORD}],
                temperature=0, max_tokens=200, stream=True, **fmt,
                extra_headers={"x-request-id": f"s{i}"})
            assert raw.headers["x-specgate-backend"] == "baseline"
            text = "".join([c.choices[0].delta.content or "" async for c in raw.parse() if c.choices])
            assert text == ANSWER
        whole = await client.chat.completions.with_raw_response.create(
            model="specgate-emu", messages=[{"role": "user", "content": "Extract as JSON:\n" + RECORD}],
            temperature=0, max_tokens=200, **fmt, extra_headers={"x-request-id": "s3"})
        assert whole.headers["x-specgate-backend"] == "baseline"
        assert whole.parse().choices[0].message.content == ANSWER
        lrn = state.learner
        await until(lambda: lrn.speculative_observations("structured", "greedy") == 4)  # recorded after the answer
        async with aiohttp.ClientSession() as s, s.get(gw.url + "/admin/state") as r:
            shadow = (await r.json())["shadow"]
        row = shadow["classes"]["structured/greedy"]
        assert row["reads"] == 4 and row["shadow_tokens_per_step"] > 1.6  # the answer copies the record
        # calibrated at the default share of the gain (nothing served by the n-gram server to calibrate on)
        assert abs(row["calibrated_tokens_per_step"] - (1 + 0.5 * (row["shadow_tokens_per_step"] - 1))) < 1e-3
        assert row["learned_tokens_per_step"] > 1.3 > Settings().prior_tokens_per_step
        assert shadow["replays"] == 4 and shadow["cost_us_mean"] > 0 and shadow["calibration"] == {}


def test_unset_the_shadow_runs_where_a_pair_shares_a_gpu_and_not_on_fleets() -> None:
    """The default (2026-12-05 f): a pair's idle n-gram server gives no evidence of its own, a fleet's is measured
    where it serves; set either way, the setting wins; a draft-model server has no prompt lookup to replay."""
    from gateway.accounting import Accounting
    from gateway.backends import BackendPool
    from gateway.metrics import Metrics

    def shadow_on(**kw: object) -> bool:
        s = Settings(**kw)  # type: ignore[arg-type]
        return Accounting(s, BackendPool(s, Metrics()), Learner(s.learner_config()), Metrics()).shadow is not None

    pair = {"baseline_urls": ["http://127.0.0.1:9"], "speculative_urls": ["http://127.0.0.1:10"]}  # one GPU
    fleet = {"backends": ["baseline=http://127.0.0.1:9", "speculative=http://127.0.0.1:10"]}  # a GPU each
    assert shadow_on(**pair) and not shadow_on(**fleet)
    assert not shadow_on(**pair, shadow_lookup=False) and shadow_on(**fleet, shadow_lookup=True)
    assert not shadow_on(**pair, speculative_method="draft_model")
