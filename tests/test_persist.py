"""Learned state that lasts (gateway/persist.py, Learner.export_state/import_state): the state file's round
trip and every way it can be unusable, the weight cap, and a warm start from a real peer gateway."""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from conftest import fast_settings, start_gateway

from gateway.costmodel import StepModel
from gateway.learner import Learner, LearnerConfig, Observation
from gateway.persist import EXPORT_PATH, FORMAT, VERSION, envelope, load_file, write_file
from gateway.state import AppState

PRIORS = {"baseline": StepModel(0.005, 0.00004), "speculative": StepModel(0.0075, 0.00015)}
ADMIN = "admin-secret"


def learner(**kw: Any) -> Learner:
    return Learner(LearnerConfig(priors=PRIORS, prior_tokens_per_step=1.2, **kw))


def trained(n: int = 60, seed: int = 1) -> Learner:
    """A learner that has seen structured greedy requests run at ~3 tokens/step on the speculative server
    and chat requests on the baseline, with both servers loaded."""
    lrn, rng = learner(), random.Random(seed)
    for i in range(n):
        steps = rng.randint(40, 60)
        lrn.observe(Observation("speculative", "structured", "greedy", 300, 3 * steps, steps, 0.03,
                                0.03 + steps * 0.011, 4, 2))
        lrn.observe(Observation("baseline", "chat", "high", 80, 200, 200, 0.02, 0.02 + 200 * 0.006, 6,
                                3 if i % 2 else 0,
                                max_tokens=256))
        lrn.observe_backend_acceptance(2.4, 128)
    return lrn


def estimates(lrn: Learner) -> dict[str, float]:
    return {"tps": lrn.tokens_per_step("structured", "greedy"), "tps_chat": lrn.tokens_per_step("chat", "high"),
            "out": lrn.output_tokens("chat", "high", 1 << 30), "frac": lrn.output_tokens("chat", "high", 100, True),
            "base_s": lrn.step_model("baseline").base_s, "per_req": lrn.step_model("speculative").per_request_s,
            "kappa": lrn.interference("baseline"), "prefill": lrn.prefill_s_per_token("speculative"),
            "backend": lrn.backend_tokens_per_step()}


def test_round_trip_without_a_cap_restores_every_estimate() -> None:
    src = trained()
    dst = learner()
    dst.import_state(json.loads(json.dumps(src.export_state())), max_weight=1e9)
    assert estimates(dst) == pytest.approx(estimates(src), rel=1e-9)
    assert dst.speculative_observations("structured", "greedy") == src.speculative_observations("structured", "greedy")
    assert dst.bucket_speculative_observations("greedy") == 60
    assert dst.export_state()["tokens_per_step"] == src.export_state()["tokens_per_step"]


def test_import_is_a_capped_prior_that_new_traffic_moves() -> None:
    src = trained()
    assert src.tokens_per_step("structured", "greedy") > 2.5
    warm = learner()
    warm.import_state(src.export_state())  # default cap: the prior weight (3 observations)
    table = warm.export_state()["tokens_per_step"]
    assert isinstance(table, dict) and table["structured/greedy"][1] <= 3.0  # weight capped
    assert warm.speculative_observations("structured", "greedy") == 60  # still counts as measured: no re-probing
    assert warm.tokens_per_step("structured", "greedy") > 2.0  # far above the 1.2 prior it would start from
    # the world changed: acceptance collapsed. The warm replica follows within a few requests, the source not.
    for lrn in (src, warm):
        for _ in range(4):
            lrn.observe(Observation("speculative", "structured", "greedy", 300, 50, 50, 0.03, 0.6, 4, 2))
    assert warm.tokens_per_step("structured", "greedy") < 1.5 < src.tokens_per_step("structured", "greedy")


@pytest.mark.parametrize("mutate", [
    lambda s: s.update(schema=99),
    lambda s: s.update(num_speculative_tokens=7),
    lambda s: s["tokens_per_step"].update({"structured/greedy": ["x", 1, 1]}),
    lambda s: s["tokens_per_step"].update({"no-slash": [2.0, 1, 1]}),
    lambda s: s["tokens_per_step"].update({"a/b": [float("nan"), 1, 1]}),
    lambda s: s["output_tokens"].update({f"c{i}/greedy": [10.0, 1, 1] for i in range(2000)}),  # unbounded growth
    lambda s: s["steps"].pop("baseline"),
    lambda s: s.update(interference=[1, 2]),
])
def test_malformed_learner_state_is_refused_and_changes_nothing(mutate: Any) -> None:
    state = trained().export_state()
    mutate(state)
    lrn = learner()
    before = lrn.export_state()
    with pytest.raises(ValueError):
        lrn.import_state(state)
    assert lrn.export_state() == before


def test_state_file_round_trip_is_atomic(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "state.json"
    src = trained()
    write_file(path, envelope(src))
    write_file(path, envelope(src))  # replaces in place
    assert [p.name for p in path.parent.iterdir()] == ["state.json"]  # no temporary file left behind
    doc = json.loads(path.read_text())
    assert doc["format"] == FORMAT and doc["version"] == VERSION
    dst = learner()
    assert load_file(path, dst, max_weight=1e9)
    assert estimates(dst) == pytest.approx(estimates(src), rel=1e-9)


@pytest.mark.parametrize(("content", "why"), [
    (None, "state_file_missing"),
    (b"\x00\xff garbage", "state_file_ignored"),
    (b'{"format": "specgate-learner-state", "version": 1, "learner": {"sch', "state_file_ignored"),  # truncated
    (b'{"hello": "world"}', "foreign"),
    (b"[1, 2, 3]", "foreign"),
    (json.dumps({"format": FORMAT, "version": VERSION + 1, "learner": {}}).encode(), "version"),
    (json.dumps({"format": FORMAT, "version": VERSION, "learner": {"schema": 1}}).encode(), "state_file_ignored"),
])
def test_unusable_state_file_is_logged_and_ignored(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                   content: bytes | None, why: str) -> None:
    path = tmp_path / "state.json"
    if content is not None:
        path.write_bytes(content)
    lrn = learner()
    before = lrn.export_state()
    with caplog.at_level(logging.INFO, logger="specgate.persist"):
        assert load_file(path, lrn, None) is False
    assert lrn.export_state() == before
    assert why in caplog.text


async def _get_json(url: str, key: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with aiohttp.ClientSession() as s, s.get(url, headers=headers) as r:
        return r.status, await r.json(content_type=None)


async def test_new_replica_warm_starts_from_a_running_peer(fakes: Any, tmp_path: Path) -> None:
    base, spec = fakes
    common = dict(baseline_urls=[base.url], speculative_urls=[spec.url], admin_api_key=ADMIN)
    peer = await start_gateway(fast_settings(**common))
    fresh: list[Any] = []
    try:
        src = peer.app[AppState.key].learner
        for o in (Observation("speculative", "code", "greedy", 300, 150, 50, 0.03, 0.6, 2, 0),) * 20:
            src.observe(o)
        status, _ = await _get_json(peer.url + EXPORT_PATH)
        assert status == 401  # the export needs the admin key
        status, doc = await _get_json(peer.url + EXPORT_PATH, ADMIN)
        assert status == 200 and doc["format"] == FORMAT
        # a dead peer first: skipped after its timeout, the live one answers
        replica = await start_gateway(fast_settings(**common, peers=["http://127.0.0.1:9", peer.url],
                                                    peer_timeout_s=1.0, state_file=tmp_path / "none.json"))
        fresh.append(replica)
        warm = replica.app[AppState.key].learner
        assert warm.speculative_observations("code", "greedy") == 20
        assert warm.tokens_per_step("code", "greedy") > 2.0 > learner().tokens_per_step("code", "greedy")
        # a replica with the wrong admin key gets nothing and still starts, from its priors
        cold = await start_gateway(fast_settings(**{**common, "admin_api_key": "wrong"}, peers=[peer.url]))
        fresh.append(cold)
        assert cold.app[AppState.key].learner.speculative_observations("code", "greedy") == 0
        status, _ = await _get_json(cold.url + "/ready")
        assert status == 200
    finally:
        for gw in [*fresh, peer]:
            await gw.runner.cleanup()


async def test_gateway_writes_state_on_shutdown_and_reads_it_at_start(fakes: Any, tmp_path: Path) -> None:
    base, spec = fakes
    path = tmp_path / "state.json"
    path.write_bytes(b"{not json")  # a corrupt file: logged, ignored, the gateway starts anyway
    settings = fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url], state_file=path,
                             state_interval_s=0.05)
    first = await start_gateway(settings)
    for _ in range(10):
        first.app[AppState.key].learner.observe(
            Observation("speculative", "extraction", "low", 300, 120, 40, 0.03, 0.5, 1, 0))
    await first.runner.cleanup()
    doc = json.loads(path.read_text())
    assert doc["learner"]["tokens_per_step"]["extraction/low"][2] == 10
    second = await start_gateway(settings)
    try:
        assert second.app[AppState.key].learner.speculative_observations("extraction", "low") == 10
    finally:
        await second.runner.cleanup()
