"""Learned state across restarts and replicas: the state file and the warm start from a peer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gateway import persist
from gateway.bench.kit.fake_vllm import FakePair
from gateway.bench.kit.inproc import fast_settings, start_gateway
from gateway.core.learner import Learner, Observation
from gateway.core.learner_state import export_state, import_state
from gateway.settings import Settings
from gateway.state import AppState


def taught() -> Learner:
    lrn = Learner(Settings().learner_config())
    for _ in range(40):
        lrn.observe(Observation("speculative", "structured", "greedy", 300, 200, 60, 0.03, 0.5, 2.0))
        lrn.observe(Observation("baseline", "creative", "high", 300, 150, None, 0.03, 0.8, 3.0, max_tokens=200))
    return lrn


def test_round_trip_keeps_the_estimates_with_capped_weight() -> None:
    source = taught()
    copy = Learner(Settings().learner_config())
    import_state(copy, json.loads(json.dumps(export_state(source))), max_weight=1e9)
    assert copy.tokens_per_step("structured", "greedy") == pytest.approx(source.tokens_per_step("structured",
                                                                                                "greedy"), rel=0.02)
    assert copy.output_tokens("creative", "high", 200, True) == pytest.approx(
        source.output_tokens("creative", "high", 200, True), rel=0.05)
    restored, saved = copy.step_model("speculative"), source.step_model("speculative")
    assert (restored.base_s, restored.per_request_s) == pytest.approx((saved.base_s, saved.per_request_s))
    capped = Learner(Settings().learner_config())
    import_state(capped, export_state(source), max_weight=2.0)
    assert capped.tokens_per_step_posterior("structured", "greedy")[1] > \
        source.tokens_per_step_posterior("structured", "greedy")[1]  # capped weight: less certain here
    # a warm start is a prior, not a lock-in: a different truth takes over within a few dozen requests
    for _ in range(40):
        capped.observe(Observation("speculative", "structured", "greedy", 300, 60, 60, 0.03, 0.5, 2.0))
    assert capped.tokens_per_step("structured", "greedy") < 1.3


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"format": "other"}',
                                     b'{"format": "specgate-learner", "learner": {"version": 99}}',
                                     b'{"format": "specgate-learner", "learner": {"version": 1, "prefill": 3}}'])
def test_unusable_state_files_are_ignored(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "state.json"
    path.write_bytes(content)
    lrn = Learner(Settings().learner_config())
    before = export_state(lrn)
    assert not persist.load_file(path, lrn, 10.0)
    assert export_state(lrn) == before
    assert not persist.load_file(tmp_path / "missing.json", lrn, 10.0)


@pytest.mark.asyncio
async def test_state_is_saved_on_shutdown_and_restored_at_start(tmp_path: Path, fakes: FakePair) -> None:
    base, spec = fakes
    path = tmp_path / "state" / "learner.json"
    (tmp_path / "state").mkdir()
    path.write_text("garbage")  # a corrupt file never stops the start
    settings = fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url], state_file=path)
    gw = await start_gateway(settings)
    source = taught()
    import_state(gw.app[AppState.key].learner, export_state(source), max_weight=1e9)
    await gw.runner.cleanup()
    saved = json.loads(path.read_text())
    assert saved["format"] == "specgate-learner"
    again = await start_gateway(settings)
    try:
        assert again.app[AppState.key].learner.tokens_per_step("structured", "greedy") == pytest.approx(
            source.tokens_per_step("structured", "greedy"), rel=0.05)
    finally:
        await again.runner.cleanup()


@pytest.mark.asyncio
async def test_a_new_replica_warm_starts_from_a_peer_with_the_admin_key(fakes: FakePair) -> None:
    base, spec = fakes
    common = dict(baseline_urls=[base.url], speculative_urls=[spec.url], admin_api_key="adm")
    peer = await start_gateway(fast_settings(**common))
    source = taught()
    import_state(peer.app[AppState.key].learner, export_state(source), max_weight=1e9)
    try:
        fresh = await start_gateway(fast_settings(**common, peers=["http://127.0.0.1:9", peer.url]))
        wrong_key = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url],
                                                      admin_api_key="nope", peers=[peer.url]))
        try:
            want = source.tokens_per_step("structured", "greedy")
            assert fresh.app[AppState.key].learner.tokens_per_step("structured", "greedy") == pytest.approx(
                want, rel=0.1)
            prior = Settings().prior_tokens_per_step
            assert wrong_key.app[AppState.key].learner.tokens_per_step("structured", "greedy") == prior
        finally:
            await fresh.runner.cleanup()
            await wrong_key.runner.cleanup()
    finally:
        await peer.runner.cleanup()


@pytest.mark.asyncio
async def test_a_new_replica_joins_the_peer_s_regime(fakes: FakePair) -> None:
    """On one GPU a replica that starts at baseline while the others carry the GPU on the speculative server makes
    the two servers alternate: a warm start carries each shared GPU's regime too."""
    base, spec = fakes
    common = dict(baseline_urls=[base.url], speculative_urls=[spec.url], admin_api_key="adm")
    peer = await start_gateway(fast_settings(**common))
    peer.app[AppState.key].router.import_regimes({"pair-0": "speculative"})
    try:
        fresh = await start_gateway(fast_settings(**common, peers=[peer.url]))
        try:
            assert fresh.app[AppState.key].router.export_regimes() == {"pair-0": "speculative"}
        finally:
            await fresh.runner.cleanup()
    finally:
        await peer.runner.cleanup()
