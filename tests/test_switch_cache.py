"""A shared GPU's regime switch is priced with the prefix cache it leaves behind (`gateway.core.switch_cache`)."""

from __future__ import annotations

import math
import time

from gateway.backends import BackendPool
from gateway.core.learner import Learner
from gateway.core.protocol import RequestView, request_view
from gateway.core.switch_cache import HeldPrefix, cold_cache_cost_s, cold_prefix_tokens
from gateway.metrics import Metrics
from gateway.router import Router
from gateway.settings import Settings


def test_each_repeated_prefix_counts_once_at_its_largest_shortfall() -> None:
    recent = [HeldPrefix(11, 500, 0, 0), HeldPrefix(11, 520, 0, 0), HeldPrefix(22, 4000, 0, 0),
              HeldPrefix(22, 4000, 0, 0), HeldPrefix(0, 0, 0, 0)]  # the last: nothing held anywhere
    assert cold_prefix_tokens(recent, "speculative") == 520 + 4000


def test_what_the_arriving_server_holds_too_is_not_lost() -> None:
    recent = [HeldPrefix(11, 500, 7, 500), HeldPrefix(22, 4000, 8, 1000)]
    assert cold_prefix_tokens(recent, "speculative") == 3000
    assert cold_prefix_tokens(recent, "baseline") == 0  # leaving the n-gram server: the baseline holds more


def test_the_direction_reads_the_leaving_servers_keys() -> None:
    recent = [HeldPrefix(0, 0, 33, 800), HeldPrefix(0, 0, 33, 900)]
    assert cold_prefix_tokens(recent, "baseline") == 900
    assert cold_prefix_tokens(recent, "speculative") == 0


def test_the_cost_is_the_prefill_for_the_prompts_and_for_every_request_stalled_through_it() -> None:
    assert cold_cache_cost_s(1000, 4e-5, 0.0) == 1000 * 4e-5
    assert cold_cache_cost_s(1000, 4e-5, 9.0) == 10 * 1000 * 4e-5
    assert cold_cache_cost_s(0, 4e-5, 9.0) == 0.0
    assert cold_cache_cost_s(-5, 4e-5, 9.0) == 0.0


def test_an_unknown_arriving_load_prices_nothing_to_prefill_at_zero_not_nan() -> None:
    """Regression: the first decisions of a group, before its arrival rate is known (inf), priced a switch with
    nothing cached at 0 x inf = NaN, and a NaN price takes no switch (mixed-phases lost its free first switch)."""
    assert cold_cache_cost_s(0, 4e-5, math.inf) == 0.0
    assert cold_cache_cost_s(100, 4e-5, math.inf) == math.inf


def _pair(cold: bool) -> Router:
    s = Settings(baseline_urls=["http://127.0.0.1:9"], speculative_urls=["http://127.0.0.1:10"],
                 regime_price_cold_cache=cold)
    return Router(s, BackendPool(s, Metrics()), Learner(s.learner_config()))


def _ask(question: str) -> RequestView:
    system = "You answer questions about the attached contract. " + "Clause text, repeated verbatim. " * 60
    return request_view("/v1/chat/completions", {
        "model": "m", "temperature": 0, "max_tokens": 64,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}]})


def test_the_router_prices_a_switch_with_the_prefix_its_traffic_repeats_once() -> None:
    """The router's wiring: requests sharing a 2 KB system prompt go to the baseline; each after the first finds it
    held there and not on the n-gram server; a switch to the n-gram server is priced with that prefix prefilled
    again once (not once per request), and without the setting not at all."""
    prices = {}
    for cold in (True, False):
        router = _pair(cold)
        routed = [router.route(_ask(f"Question {i}: who signs?"), f"r{i}") for i in range(6)]
        assert all(r is not None and r.decision.role == "baseline" for r in routed)
        for b in router.pool.backends:
            b.inflight = 0  # nothing left to drain: the price is the cold cache alone
        router.running["pair-0"]["baseline"].clear()
        prices[cold] = router._price("pair-0", "speculative", 10.0, time.monotonic(), None, router.regime_config)
        held = [r.prefix for r in router.recent["pair-0"]]
    assert prices[False].cost_s == 0.0
    once = max(p.baseline_tokens for p in held)
    assert once > 400 and all(p.speculative_tokens == 0 for p in held)
    assert sum(1 for p in held if p.baseline_key) == 5  # the first request found nothing held
    assert cold_prefix_tokens(held, "speculative") == once  # one prefix, repeated five times: prefilled again once
    prefill = Learner(Settings().learner_config()).prefill_s_per_token("speculative")
    little = prices[True].arriving_load  # the arriving load is Little's, or the group's recent mean load if more
    low, high = (cold_cache_cost_s(once, prefill, load) for load in (little, max(little, 8.0)))
    assert low - 1e-9 <= prices[True].cost_s <= high + 1e-9
    assert prices[True].cold_cache_s == prices[True].cost_s and prices[False].cold_cache_s == 0.0  # logged apart
