"""A fleet's TTFT weight (`AdaptiveConfig.fleet_ttft_weight`, `SPECGATE_FLEET_TTFT_WEIGHT`, 0.5 by default): where
every candidate has a GPU of its own the cost policy counts the predicted time to first token half again; where any
shares a GPU, `ttft_weight` (0) and the pair's decisions are as before. Why: results/fleet-ttft-2026-12-06-l."""

from __future__ import annotations

import dataclasses

from test_prefill_queue import CFG, RULES, _input

from gateway.core.policy import Candidate, decide, for_candidates
from gateway.settings import Settings

FLEET = (Candidate("baseline-0", "baseline", "g0", 1.0, (), ((0.0, 13000),)),
         Candidate("baseline-1", "baseline", "g1", 6.0, ()),
         Candidate("speculative-0", "speculative", "g2", 30.0, ()))
PAIR = (Candidate("baseline-0", "baseline", "gpu0", 1.0, (("speculative", 0.0),)),
        Candidate("speculative-0", "speculative", "gpu0", 0.0, (("baseline", 1.0),)))


def test_the_default_weighs_the_first_token_half_again_on_fleets_only() -> None:
    cfg = Settings().adaptive_config()
    assert cfg.fleet_ttft_weight == 0.5 and cfg.ttft_weight == 0.0
    assert for_candidates(cfg, FLEET).ttft_weight == 0.5
    assert for_candidates(cfg, PAIR) is cfg
    assert for_candidates(cfg, (*FLEET, *PAIR)) is cfg  # one shared GPU: one objective for all, the pair's
    assert for_candidates(cfg, FLEET) is for_candidates(cfg, FLEET)  # made once per config


def test_on_a_fleet_the_weight_trades_a_little_decode_for_a_sooner_first_token() -> None:
    """A 2,000-token prompt with a 300-token answer: behind a 13k-token prefill (0.33 s) on a quiet baseline, or at
    once on one with 6 requests decoding. By e2e alone the quiet one (its decode is faster, and it slows fewer);
    with the first token weighed half again the busier one; at 8 requests, the quiet one again."""
    off = decide("adaptive", _input(2000, FLEET, output=300), RULES, CFG)
    on = decide("adaptive", _input(2000, FLEET, output=300), RULES, dataclasses.replace(CFG, fleet_ttft_weight=0.5))
    assert off is not None and on is not None
    assert off.backend == "baseline-0" and on.backend == "baseline-1"
    assert on.predicted_ttft_s is not None and off.predicted_ttft_s is not None
    assert on.predicted_ttft_s < off.predicted_ttft_s - 0.3
    busier = (FLEET[0], FLEET[1]._replace(load=8.0), FLEET[2])
    d = decide("adaptive", _input(2000, busier, output=300), RULES, dataclasses.replace(CFG, fleet_ttft_weight=0.5))
    assert d is not None and d.backend == "baseline-0"


def test_a_pair_decides_as_before_whatever_the_fleet_weight() -> None:
    for load in (0.0, 1.0, 3.0, 8.0):
        for prompt in (200, 4000, 30000):
            pair = (PAIR[0]._replace(load=load), PAIR[1]._replace(co_runners=(("baseline", load),)))
            for regime in ("baseline", "speculative"):
                inp = _input(prompt, pair, regimes={"gpu0": regime})
                assert (decide("adaptive", inp, RULES, CFG)
                        == decide("adaptive", inp, RULES, dataclasses.replace(CFG, fleet_ttft_weight=2.0)))
