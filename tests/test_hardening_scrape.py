"""Issue 35, item 3: one NaN or infinity in a backend's `/metrics` is a failed scrape, never the learner's or the
pool's state: the previous good state stays, and the next good scrape is read as usual."""

from __future__ import annotations

import math
import time

import aiohttp
import pytest
from aiohttp import web

from gateway.bench.kit.fake_vllm import FakeBackend
from gateway.bench.kit.inproc import fast_settings, start_gateway, until
from gateway.core.learner_state import export_state
from gateway.core.vllm_metrics import BadScrape, parse_load, parse_vllm_metrics
from gateway.state import AppState

GOOD = """\
vllm:num_requests_running{engine="0"} 3.0
vllm:num_requests_waiting{engine="0"} 1.0
vllm:kv_cache_usage_perc{engine="0"} 0.2
vllm:generation_tokens_total{engine="0"} %(gen)s
vllm:spec_decode_num_drafts_total{engine="0"} %(drafts)s
vllm:spec_decode_num_draft_tokens_total{engine="0"} %(draft_tokens)s
vllm:spec_decode_num_accepted_tokens_total{engine="0"} %(accepted)s
"""


def page(n: float, running: str = "3.0") -> str:
    text = GOOD % {"gen": 200.0 * n, "drafts": 100.0 * n, "draft_tokens": 400.0 * n, "accepted": 100.0 * n}
    return text.replace('running{engine="0"} 3.0', f'running{{engine="0"}} {running}')


@pytest.mark.parametrize("bad", ["NaN", "+Inf", "-Inf", "-3", "1e300"])
def test_a_non_finite_or_impossible_value_fails_the_scrape(bad: str) -> None:
    with pytest.raises(BadScrape):
        parse_vllm_metrics(page(1, running=bad))
    with pytest.raises(BadScrape):
        parse_vllm_metrics(page(1).replace("_accepted_tokens_total{engine=\"0\"} 100.0",
                                           f"_accepted_tokens_total{{engine=\"0\"}} {bad}"))
    assert parse_load(page(1, running=bad).encode()) is None
    assert parse_load(page(1).encode()) == 4.0
    assert parse_vllm_metrics(page(1)).running == 3.0


class ScriptedMetrics(FakeBackend):
    """A fake vLLM server whose `/metrics` page the test sets."""

    text: str = ""
    scrapes: int = 0

    async def _metrics(self, request: web.Request) -> web.Response:
        self.scrapes += 1
        return web.Response(text=self.text, content_type="text/plain")


@pytest.mark.asyncio
@pytest.mark.parametrize("bad_page", [page(2, running="NaN"), page(2).replace(" 200.0", " +Inf")])
async def test_one_bad_scrape_keeps_the_previous_good_state(bad_page: str) -> None:
    """`num_requests_running NaN` for one second made the pool's load NaN for good (inf - inf), both step models
    NaN, and `/admin/learner` exported null; `+Inf` spec-decode counters for 0.3 s made tokens/step NaN."""
    base, spec = ScriptedMetrics(), ScriptedMetrics(spec=True)
    base.text, spec.text = page(0), page(0)
    await base.start()
    await spec.start()
    gw = await start_gateway(fast_settings(baseline_urls=[base.url], speculative_urls=[spec.url],
                                           load_scrape_interval_s=0.05, scrape_interval_s=0.05))
    state = gw.app[AppState.key]
    try:
        await until(lambda: spec.scrapes >= 3 and base.scrapes >= 3)
        spec.text = page(1)  # one good delta: the learner sees acceptance
        await until(lambda: state.learner._backend_tokens_per_step.count >= 1)
        seen = spec.scrapes
        spec.text = base.text = bad_page
        await until(lambda: spec.scrapes >= seen + 6)
        spec.text = base.text = page(3)
        seen = spec.scrapes
        await until(lambda: spec.scrapes >= seen + 6)
        now = time.monotonic()
        for b in state.pool.backends:
            assert b.scraped_load == 4.0  # read again from the good page
            assert math.isfinite(state.pool.load(b, now))
            assert math.isfinite(state.pool.area(b, now))
        assert math.isfinite(state.learner.backend_tokens_per_step())
        for role in ("baseline", "speculative"):
            model = state.learner.step_model(role)
            assert math.isfinite(model.base_s) and math.isfinite(model.per_request_s)
        async with aiohttp.ClientSession() as s, s.get(gw.url + "/admin/learner") as r:
            assert r.status == 200
            assert "null" not in await r.text()
        exported = export_state(state.learner)["backend_tokens_per_step"]
        assert isinstance(exported, list) and all(math.isfinite(x) for x in exported)
    finally:
        await gw.runner.cleanup()
        await base.stop()
        await spec.stop()
