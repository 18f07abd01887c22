"""Model-aware pools: each backend's `/v1/models` decides which requests it may get (LoRA adapters included);
a model nobody serves is a 404 `model_not_found`; the gateway lists the union. Real emulated servers and the
official openai SDK."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import openai
import orjson
import pytest

from gateway.bench.kit.inproc import RunningGateway, fast_settings, start_gateway, until
from gateway.emulator import EmulatedFleet
from gateway.served_models import MAX_MODELS_PER_BACKEND, ServedModels, parse_listing
from gateway.state import AppState

FAST = 0.2


def test_a_listing_is_parsed_bounded_and_tolerant() -> None:
    body = orjson.dumps({"object": "list", "data": [{"id": "m"}, {"id": "lora", "parent": "m"}, {"id": 3}, "x",
                                                    {"id": ""}]})
    assert [c["id"] for c in parse_listing(body) or []] == ["m", "lora"]
    assert parse_listing(b"not json") is None and parse_listing(b'{"data": 1}') is None
    many = orjson.dumps({"data": [{"id": f"m{i}"} for i in range(3 * MAX_MODELS_PER_BACKEND)]})
    assert len(parse_listing(many) or []) == MAX_MODELS_PER_BACKEND


def test_who_serves_what_unknown_backends_may_serve_anything() -> None:
    served = ServedModels(["a", "b", "c"])
    assert served.not_serving("x") == frozenset() and served.distinct() == 1  # nothing known: route as before
    served.set("a", [{"id": "alpha"}])
    served.set("b", [{"id": "beta"}, {"id": "beta-lora", "parent": "beta"}])
    assert served.not_serving("alpha") == {"b"}  # c never answered: it may serve alpha
    assert served.not_serving("beta-lora") == {"a"}
    served.set("c", [{"id": "alpha"}])
    assert served.not_serving("alpha") == {"b"} and served.not_serving("nope") == {"a", "b", "c"}
    assert not served.served_anywhere("nope") and served.distinct() == 2
    assert [c["id"] for c in served.listing()] == ["alpha", "beta", "beta-lora"]
    for i in range(20 * MAX_MODELS_PER_BACKEND):  # hostile model names cannot grow the memo without bound
        served.not_serving(f"junk-{i}")
    assert len(served._off) <= 4 * MAX_MODELS_PER_BACKEND


async def _two_model_gateway(fleet: EmulatedFleet) -> RunningGateway:
    settings = fast_settings(backends=fleet.backends_setting().split(","), policy="adaptive", random_seed=1)
    gw = await start_gateway(settings)
    models = gw.app[AppState.key].router.fleet.models
    await until(lambda: all(models.models_of(n) is not None for n in models.state()))
    return gw


@pytest.mark.asyncio
async def test_a_two_model_fleet_sends_each_model_only_to_its_servers() -> None:
    layout = ["baseline", "speculative", "baseline", "speculative"]
    async with EmulatedFleet(layout, time_scale=FAST, models=["alpha", "alpha", "beta", "beta"],
                             adapters={"beta": ["beta-sql"]}) as fleet:
        serves = {f"{s.role}-{i // 2}": {s.server.model_name, *s.server.adapters} for i, s in enumerate(fleet.servers)}
        gw = await _two_model_gateway(fleet)
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0)
        try:
            listed = sorted(m.id for m in (await client.models.list()).data)
            assert listed == ["alpha", "beta", "beta-sql"]

            async def one(model: str, i: int) -> tuple[str, str]:
                content = "Return JSON with keys a, b." if i % 2 else "Write a short poem about rain."
                messages: Any = [{"role": "user", "content": f"{content} ({i})"}]
                temperature = 0 if i % 2 else 1.0
                if i % 3 == 0:
                    stream = await client.chat.completions.create(model=model, messages=messages, max_tokens=24,
                                                                  temperature=temperature, stream=True)
                    assert {c.model async for c in stream} == {model}
                    return model, stream.response.headers["x-specgate-instance"]
                r = await client.chat.completions.with_raw_response.create(
                    model=model, messages=messages, max_tokens=24, temperature=temperature)
                assert r.parse().model == model
                return model, r.headers["x-specgate-instance"]

            sent = await asyncio.gather(*(one(m, i) for i in range(24) for m in ("alpha", "beta", "beta-sql")))
            misrouted = [(m, b) for m, b in sent if m not in serves[b]]
            assert misrouted == []
            by_model = Counter((m, serves[b] >= {"beta"}) for m, b in sent)
            assert by_model == {("alpha", False): 24, ("beta", True): 24, ("beta-sql", True): 24}
            assert all(s.server.stats.errors == 0 for s in fleet.servers)  # no server answered a 404

            with pytest.raises(openai.NotFoundError) as err:
                await client.chat.completions.create(model="gamma", messages=[{"role": "user", "content": "hi"}])
            assert err.value.status_code == 404 and err.value.code == "model_not_found"
            assert isinstance(err.value.body, dict) and err.value.body["param"] == "model"
            lrn = gw.app[AppState.key].learner  # the learner keys classes per model on a multi-model fleet
            assert any("@beta-sql" in key for key in lrn.state()["classes"])  # type: ignore[attr-defined]
        finally:
            await client.close()
            await gw.runner.cleanup()


@pytest.mark.asyncio
async def test_failover_stays_within_the_model() -> None:
    """The model's only server fails: the request fails over to no server of another model (the old failover
    took any backend of either role, which would have sent it to a server that answers 404)."""
    async with EmulatedFleet(["baseline", "baseline"], time_scale=FAST, models=["alpha", "beta"]) as fleet:
        gw = await _two_model_gateway(fleet)
        beta_server = fleet.servers[1]
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0)
        try:
            await fleet._runners.pop(1).cleanup()  # beta's server goes away
            with pytest.raises(openai.APIStatusError) as err:
                await client.chat.completions.create(model="beta", max_tokens=8,
                                                     messages=[{"role": "user", "content": "hi"}])
            assert err.value.status_code in (502, 503)
            assert fleet.servers[0].server.stats.errors == 0  # alpha's server never saw beta's request
            assert beta_server.server.model_name == "beta"
            r = await client.chat.completions.create(model="alpha", max_tokens=8,
                                                     messages=[{"role": "user", "content": "hi"}])
            assert r.model == "alpha"
        finally:
            await client.close()
            await gw.runner.cleanup()


def test_the_learner_class_is_per_model_only_on_a_multi_model_fleet() -> None:
    from gateway.fleet_view import FleetView

    view = FleetView(["a", "b"], prefix_aware=True, default_kv_tokens=1000, max_blocks=100, chars_per_token=4.0)
    view.models.set("a", [{"id": "org/alpha"}])
    view.models.set("b", [{"id": "org/alpha"}])
    assert view.learner_class("chat", "org/alpha") == "chat"
    view.models.set("b", [{"id": "org/beta"}])
    assert view.learner_class("chat", "org/beta") == "chat@org:beta"  # no "/": state keys are "class/bucket"


def test_the_models_bench_counts_a_misrouted_request_and_the_unknown_models_answers() -> None:
    from gateway.bench.models_bench import UNKNOWN, assign_models, tally
    from gateway.workloads.items import WorkloadItem

    items = [WorkloadItem(id=f"r{i}", t=0.0, endpoint="/v1/chat/completions", body={}) for i in range(6)]
    asked = assign_models(items, ["alpha", "beta"], unknown_every=3)
    assert list(asked.values()) == ["alpha", "beta", UNKNOWN, "alpha", "beta", UNKNOWN]
    serves = {"baseline-0": {"alpha"}, "baseline-1": {"beta"}}
    statuses = {"r0": ("200", None), "r1": ("200", None), "r2": ("404", '{"error": {"code": "model_not_found"}}'),
                "r3": ("200", None), "r4": ("200", None), "r5": ("502", "bad gateway")}
    served_by = {"r0": "baseline-0", "r1": "baseline-1", "r3": "baseline-1", "r4": "baseline-1"}
    out = tally(asked, statuses, served_by, serves, {"baseline-0": 0, "baseline-1": 0})
    assert out["misrouted"] == 1 and out["misrouted_examples"] == [("r3", "alpha", "baseline-1")]
    assert tally(asked, statuses, served_by, serves, {"baseline-0": 2, "baseline-1": 0})["misrouted"] == 3
    assert out["per_server"] == {"baseline-0": {"alpha": 1}, "baseline-1": {"alpha": 1, "beta": 2}}
    assert out["by_model"][UNKNOWN] == {"404 model_not_found": 1, "502": 1}


@pytest.mark.asyncio
async def test_the_models_bench_on_a_two_model_fleet_misroutes_nothing(tmp_path: Any) -> None:
    """The bench end to end (a gateway process in front of an emulated two-model fleet): every request of a
    model reaches a server of that model; the unknown model's requests are answered 404 by the gateway."""
    from gateway.bench.models_bench import UNKNOWN, run
    from gateway.workloads.items import load_workload

    items = load_workload("mixed-medium")[:24]
    out = await run(items, ["baseline", "speculative", "baseline"], ["alpha", "beta", "beta"], {"beta": ["beta-sql"]},
                    unknown_every=6, time_scale=0.2, log_dir=tmp_path)
    assert out["misrouted"] == 0 and out["unknown_reached_a_server"] == 0
    assert out["server_errors"] == {"baseline-0": 0, "speculative-0": 0, "baseline-1": 0}
    assert out["by_model"][UNKNOWN] == {"404 model_not_found": 4}
    assert {m: c.get("200", 0) for m, c in out["by_model"].items() if m != UNKNOWN} == {"alpha": 7, "beta": 7,
                                                                                      "beta-sql": 6}
    assert out["per_server"]["baseline-0"] == {"alpha": 7}  # alpha's only server took all of alpha
