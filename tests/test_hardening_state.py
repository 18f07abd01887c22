"""Issue 35, items 1, 10, 15: learned state from a file or a peer is range-checked, parsed strictly and read
under caps; the learner's own arithmetic stays finite; background loops never die silently."""

from __future__ import annotations

import asyncio
import json
import logging
import math
from pathlib import Path
from typing import Any

import aiohttp
import orjson
import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from gateway import persist
from gateway.bench.kit.fake_vllm import FakePair
from gateway.bench.kit.inproc import fast_settings, serve_app, start_gateway, until
from gateway.core.learner import MAX_OUTPUT_TOKENS, Learner, Observation
from gateway.core.learner_state import CLASS_KEYS, PRIOR_SPAN, export_state, import_state
from gateway.settings import Settings
from gateway.state import AppState


def taught() -> Learner:
    lrn = Learner(Settings().learner_config())
    for _ in range(40):
        lrn.observe(Observation("speculative", "structured", "greedy", 300, 200, 60, 0.03, 0.5, 2.0))
        lrn.observe(Observation("baseline", "creative", "high", 300, 150, None, 0.03, 0.8, 3.0, max_tokens=200))
    return lrn


def document(**learner_changes: Any) -> dict[str, Any]:
    doc = persist.state_document(taught())
    doc["learner"].update(learner_changes)
    return doc


def huge_outputs() -> dict[str, list[float]]:
    return {key: [1e6, 5.0, 40.0, 0.0] for key in sorted(CLASS_KEYS)}


# --- item 1: a state that would take the fleet down


@pytest.mark.asyncio
async def test_a_huge_output_estimate_in_the_state_file_is_clamped_and_the_gateway_answers(
        tmp_path: Path, fakes: FakePair) -> None:
    """`log_output` 1e6 for each class: every request and `/admin/state` was a 500 (OverflowError in exp),
    and the periodic save wrote it back."""
    base, spec = fakes
    path = tmp_path / "state.json"
    path.write_bytes(orjson.dumps(document(log_output=huge_outputs())))
    settings = fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url], state_file=path,
                             state_save_interval_s=0.05, policy="adaptive")
    gw = await start_gateway(settings)
    try:
        lrn = gw.app[AppState.key].learner
        assert lrn.natural_output_tokens("chat", "greedy") <= MAX_OUTPUT_TOKENS
        async with aiohttp.ClientSession() as s:
            async with s.post(gw.url + "/v1/chat/completions",
                              json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}) as r:
                assert r.status == 200, await r.text()
            async with s.get(gw.url + "/admin/state") as r:
                assert r.status == 200
            def saved_clamped() -> bool:  # a periodic save has written the clamped estimates back
                try:
                    entries = json.loads(path.read_text())["learner"]["log_output"].values()
                except (OSError, ValueError, KeyError):
                    return False
                return all(entry[0] <= math.log(MAX_OUTPUT_TOKENS) for entry in entries)

            await until(saved_clamped)
    finally:
        await gw.runner.cleanup()
    saved = json.loads(path.read_text())["learner"]["log_output"]
    assert all(entry[0] <= math.log(MAX_OUTPUT_TOKENS) for entry in saved.values())


@pytest.mark.asyncio
async def test_an_infinite_count_in_the_state_file_does_not_stop_the_start(tmp_path: Path, fakes: FakePair,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    """`"count": Infinity` (Python's json accepts it) made `specgate serve` exit 1 at startup."""
    base, spec = fakes
    path = tmp_path / "state.json"
    doc = document()
    doc["learner"]["prefill"]["baseline"][2] = math.inf
    text = json.dumps(doc)  # the standard library writes `Infinity`
    assert "Infinity" in text
    path.write_text(text)
    caplog.set_level(logging.INFO, "specgate.persist")
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url], state_file=path))
    try:
        lrn = gw.app[AppState.key].learner
        assert lrn.tokens_per_step("structured", "greedy") == Settings().prior_tokens_per_step  # not imported
    finally:
        await gw.runner.cleanup()
    assert "state_ignored" in caplog.text


def test_non_finite_values_refuse_the_whole_state() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        lrn = Learner(Settings().learner_config())
        before = export_state(lrn)
        state = export_state(taught())
        state["backend_tokens_per_step"] = [1.5, 1.0, bad, 0.0]
        with pytest.raises(ValueError, match="finite"):
            import_state(lrn, state, 10.0)
        assert export_state(lrn) == before
    with pytest.raises(ValueError):
        persist.parse(b'{"a": NaN}')
    with pytest.raises(ValueError):
        persist.parse(b'{"a": 1e400}')


def test_out_of_range_estimates_are_clamped_with_a_reason() -> None:
    """Within the weight cap, `tokens_per_step` 1e300 sent every request to speculative; a baseline step 1e6x its
    prior starved the baseline for good (step models were not bounded at all)."""
    cfg = Settings().learner_config()
    state = export_state(taught())
    state["tokens_per_step"] = {key: [1e300, 5.0, 10.0, 0.0] for key in sorted(CLASS_KEYS)}
    state["step_models"] = {"baseline": [1e6, 0.0, cfg.priors["baseline"].base_s],
                            "speculative": [1.0, -5.0, cfg.priors["speculative"].base_s]}
    state["interference"] = {"baseline": [7.0, 1.0, 1.0, 0.0], "speculative": [-1.0, 1.0, -4.0, 0.0]}
    lrn = Learner(cfg)
    notes = import_state(lrn, state, 10.0)
    gamma = cfg.num_speculative_tokens
    assert all(lrn.tokens_per_step(c, b) <= gamma + 1.0 for c, _, b in (k.partition("/") for k in CLASS_KEYS))
    assert lrn.step_model("baseline").base_s <= PRIOR_SPAN * cfg.priors["baseline"].base_s * 1.0001
    assert lrn.step_model("speculative").per_request_s >= 0.0
    assert 0.0 <= lrn.interference("baseline") <= 1.5
    assert any("tokens_per_step[chat/greedy]" in n and "clamped" in n for n in notes)
    assert any("baseline step at batch 1" in n for n in notes)
    assert any("count" in n for n in notes)
    # a plausible state imports without a note
    assert import_state(Learner(cfg), export_state(taught()), 10.0) == []


def test_unknown_class_keys_are_dropped_and_too_many_refuse_the_state() -> None:
    """100,000 made-up class keys were imported and persisted; `/admin/state` then blocked the loop 3.6 s."""
    lrn = Learner(Settings().learner_config())
    state = export_state(taught())
    state["log_output"] = {**state["log_output"], "made-up/greedy": [5.0, 1.0, 1.0, 0.0]}  # type: ignore[dict-item]
    notes = import_state(lrn, state, 10.0)
    assert all(key[0] != "made-up" for key in lrn.class_estimates())
    assert any("unknown keys dropped" in n for n in notes)
    state["log_output"] = {f"c{i}/greedy": [5.0, 1.0, 1.0, 0.0] for i in range(100_000)}
    with pytest.raises(ValueError, match="keys"):
        import_state(Learner(Settings().learner_config()), state, 10.0)


def test_the_learner_s_arithmetic_stays_finite() -> None:
    lrn = taught()
    lrn._log_output[("structured", "greedy")].value = 1e6  # however it got there, exp() is bounded
    assert lrn.natural_output_tokens("structured", "greedy") == MAX_OUTPUT_TOKENS
    assert math.isfinite(lrn.output_tokens("structured", "greedy", 100, True))
    lrn._log_output[("structured", "greedy")].value = math.nan
    assert math.isfinite(lrn.natural_output_tokens("structured", "greedy"))
    before = export_state(taught())
    clean = taught()
    for bad in (math.nan, math.inf):
        clean.observe(Observation("speculative", "structured", "greedy", 300, 200, 60, 0.03, 0.5, bad))
        clean.observe(Observation("baseline", "chat", "greedy", 300, 200, 60, bad, 0.5, 2.0))
        clean.observe(Observation("baseline", "chat", "greedy", 300, 200, 60, 0.03, 0.5, 2.0,
                                  co_runners=(("speculative", bad),)))
        clean.observe_backend_acceptance(bad, 100.0)
        clean.observe_backend_acceptance(2.0, bad)
    assert export_state(clean) == before
    clean.observe_backend_acceptance(1e300, 100.0)
    assert clean.backend_tokens_per_step() <= clean.config.num_speculative_tokens + 1.0


@pytest.mark.asyncio
async def test_a_failing_background_step_is_logged_and_the_loop_goes_on(caplog: pytest.LogCaptureFixture) -> None:
    """The export loop died silently on the first OverflowError, and its re-raised error skipped the final save."""
    calls: list[int] = []

    def step() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise OverflowError("math range error")

    task = asyncio.create_task(persist.every(0.001, "test-step", step, first=True))
    while len(calls) < 3:  # noqa: ASYNC110 -- a plain list filled by the loop under test
        await asyncio.sleep(0.001)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert "background_step_failed" in caplog.text and "OverflowError" in caplog.text


def test_the_final_save_logs_rather_than_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert not persist.save_or_log(blocked / "state.json", taught())  # a parent that is a file: OSError
    assert "state_not_saved" in caplog.text
    assert persist.save_or_log(tmp_path / "ok" / "state.json", taught())


# --- items 10 and 15: peers


class Peer:
    """A peer gateway's `/admin/learner` on 127.0.0.1 that answers `body`, or hangs, or streams without end."""

    def __init__(self, body: bytes | None = None, *, endless: bool = False) -> None:
        self.body, self.endless = body, endless
        self.open = 0  # requests being answered right now
        self.sent = 0  # bytes of an endless body written before the reader went away
        self.seen_open_elsewhere: list[int] = []
        self.others: list[Peer] = []
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen_open_elsewhere.append(sum(p.open for p in self.others))
        self.open += 1
        try:
            if self.endless:
                resp = web.StreamResponse()
                await resp.prepare(request)
                chunk = b" " * 65536
                for _ in range(1024):  # 64 MiB
                    await resp.write(chunk)
                    self.sent += len(chunk)
                return resp
            if self.body is None:
                await asyncio.sleep(3600)
            return web.Response(body=self.body, content_type="application/json")
        finally:
            self.open -= 1

    async def start(self) -> str:
        app = web.Application()
        app.router.add_get("/admin/learner", self.handle)
        self._runner, self.url = await serve_app(app)
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


async def warm_start(*peers: Peer, deadline_s: float = persist.PEER_DEADLINE_S) -> tuple[bool, Learner]:
    lrn = Learner(Settings().learner_config())
    settings = Settings(peers=[p.url for p in peers])
    async with aiohttp.ClientSession() as session:
        ok = await persist.warm_start_from_peers(session, settings, lrn, deadline_s=deadline_s)
    return ok, lrn


@pytest.mark.asyncio
async def test_a_peer_body_over_the_cap_is_not_read_to_its_end() -> None:
    """A 1.5 GB peer body took startup to 4.55 GB RSS and 11.9 s (the 3 s timeout did not bound the parse)."""
    endless = Peer(endless=True)
    padded = document()
    padded["padding"] = "x" * (2 * persist.MAX_STATE_BYTES)  # a valid state, too large to be one
    large = Peer(orjson.dumps(padded))
    await endless.start()
    await large.start()
    try:
        ok, lrn = await warm_start(endless, large)
        assert not ok
        assert lrn.tokens_per_step("structured", "greedy") == Settings().prior_tokens_per_step
        await until(lambda: endless.open == 0)
        assert endless.sent < 32 * 1024 * 1024  # stopped well before its 64 MiB
    finally:
        await endless.stop()
        await large.stop()


@pytest.mark.asyncio
async def test_a_peer_with_made_up_class_keys_is_refused() -> None:
    keys = {f"class{i}/greedy": [5.0, 1.0, 1.0, 0.0] for i in range(20_000)}
    peer = Peer(orjson.dumps(document(log_output=keys)))
    assert len(peer.body or b"") < persist.MAX_STATE_BYTES  # under the size cap: the content limit refuses it
    await peer.start()
    try:
        ok, lrn = await warm_start(peer)
        assert not ok and lrn.class_estimates() == {}
    finally:
        await peer.stop()


@pytest.mark.asyncio
async def test_hung_peers_are_asked_at_once_under_one_deadline() -> None:
    """Hung peers were tried one after another (3 s each) before the port opened."""
    hung = [Peer() for _ in range(3)]
    good = Peer(orjson.dumps(document()))
    good.others = hung
    for p in (*hung, good):
        await p.start()
    try:
        ok, lrn = await warm_start(*hung, good)
        assert ok and good.seen_open_elsewhere == [3]  # asked while all three hung peers were still being asked
        assert lrn.tokens_per_step("structured", "greedy") == pytest.approx(
            taught().tokens_per_step("structured", "greedy"), rel=0.1)
        ok, _ = await warm_start(*hung, deadline_s=0.3)
        assert not ok  # all hung: one deadline for all, then the start goes on from the priors
        await until(lambda: all(p.open == 0 for p in hung))  # the requests open at the deadline were cancelled
    finally:
        for p in (*hung, good):
            await p.stop()


_ANY_NUMBER = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-(10**30), 10**30),
                        st.booleans(), st.none(), st.text(max_size=3))


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_any_corruption_of_a_state_is_refused_or_leaves_every_estimate_finite(data: st.DataObject) -> None:
    state = export_state(taught())
    for _ in range(data.draw(st.integers(1, 6))):
        table = data.draw(st.sampled_from(sorted(k for k in state if k != "version")))
        entry = state[table]
        if isinstance(entry, dict) and entry:
            key = data.draw(st.sampled_from(sorted(entry)))
            values = list(entry[key])
            values[data.draw(st.integers(0, len(values) - 1))] = data.draw(_ANY_NUMBER)
            entry[key] = values
        elif isinstance(entry, list):
            entry[data.draw(st.integers(0, len(entry) - 1))] = data.draw(_ANY_NUMBER)
    lrn = Learner(Settings().learner_config())
    try:
        import_state(lrn, state, 10.0)
    except ValueError:
        return
    estimates = [lrn.backend_tokens_per_step(), *(lrn.step_model(r).base_s for r in ("baseline", "speculative")),
                 *(lrn.step_model(r).per_request_s for r in ("baseline", "speculative"))]
    for est in lrn.class_estimates().values():
        estimates += [est.tokens_per_step, est.tokens_per_step_sd, est.output_tokens]
    assert all(math.isfinite(x) for x in estimates)
    orjson.dumps(lrn.state())  # /admin/state renders
    assert "NaN" not in json.dumps(export_state(lrn))
