"""A fleet server's decode priced at what such decodes took per second predicted, per role (`DecodeBias`): the role
the decision picks is the one whose decode it under-reads, and on every 2 + 2 window the speculative servers' decodes
took more over their prediction than the baselines' (results/fleet-judge-2026-12-06-m). A pair never reads it."""

from __future__ import annotations

import dataclasses

import pytest
from test_prefill_queue import CFG, RULES, _input

from gateway.core.decode_stall import FACTOR_MAX, DecodeBias
from gateway.core.learner import Learner, Observation
from gateway.core.policy import Candidate, decide
from gateway.settings import Settings

FLEET = (Candidate("baseline-0", "baseline", "g0", 2.0, ()),
         Candidate("speculative-0", "speculative", "g1", 2.0, ()))
PAIR = (Candidate("baseline-0", "baseline", "gpu0", 1.0, (("speculative", 0.0),)),
        Candidate("speculative-0", "speculative", "gpu0", 0.0, (("baseline", 1.0),)))


def test_the_factor_is_a_ratio_of_sums_shrunk_toward_one_and_bounded() -> None:
    bias = DecodeBias(forgetting=1.0)
    assert bias.factor("speculative") == 1.0  # nothing measured: the prediction as it is
    for _ in range(40):
        bias.observe("speculative", 1.3, 1.0)
        bias.observe("baseline", 1.0, 1.0)
    assert bias.factor("speculative") == pytest.approx((1.3 * 40 + 8) / 48)  # 40 responses against 8 at 1
    assert bias.factor("baseline") == pytest.approx(1.0)
    long_one = DecodeBias(forgetting=1.0)
    long_one.observe("speculative", 20.0, 10.0)  # a long decode weighs its predicted seconds
    for _ in range(9):
        long_one.observe("speculative", 0.1, 0.1)
    assert long_one.factor("speculative") > 1.4  # Σ taken / Σ predicted 1.92 (a mean of ratios: 1.1), shrunk: 1.51
    for _ in range(100):
        long_one.observe("speculative", 50.0, 1.0)
        long_one.observe("speculative", float("nan"), 1.0)  # nonsense is ignored
    assert long_one.factor("speculative") == FACTOR_MAX


def test_the_learner_learns_it_from_fleet_responses_routed_on_a_prediction_only() -> None:
    lrn = Learner(Settings().learner_config())
    for _ in range(30):  # a fleet server of its own: no co-runners
        lrn.observe(Observation("speculative", "chat", "low", 2000, 300, 250, 0.06, 0.06 + 2.6, 3.0,
                                predicted_decode_s=2.0))
        lrn.observe(Observation("baseline", "chat", "low", 2000, 300, 300, 0.06, 0.06 + 2.0, 3.0,
                                predicted_decode_s=2.0))
    assert lrn.decode_bias.factor("speculative") > 1.2
    assert lrn.decode_bias.factor("baseline") == pytest.approx(1.0)
    pair = Learner(Settings().learner_config())
    for _ in range(30):  # on a shared GPU, or without a prediction (a probe), nothing is learned
        pair.observe(Observation("speculative", "chat", "low", 2000, 300, 250, 0.06, 2.66, 3.0,
                                 (("baseline", 0.0),), predicted_decode_s=2.0))
        pair.observe(Observation("speculative", "chat", "low", 2000, 300, 250, 0.06, 2.66, 3.0))
    assert pair.decode_bias.factor("speculative") == 1.0


def test_a_fleet_decision_prices_it_and_logs_the_decode_before_it() -> None:
    """A 300-token answer at 2.2 tokens a step: the speculative server wins as predicted; with its decodes known to
    take 1.3x their prediction (the baselines' 1.0x), the baseline. What the decision logs for learning is the
    decode before the factor, so the factor converges to the bias instead of cancelling itself."""
    plain = _input(2000, FLEET, tps=2.2, output=300)
    assert plain.estimates is not None
    biased = dataclasses.replace(plain, estimates=dataclasses.replace(
        plain.estimates, decode_factor={"baseline": 1.0, "speculative": 1.3}))
    before, after = decide("adaptive", plain, RULES, CFG), decide("adaptive", biased, RULES, CFG)
    assert before is not None and after is not None
    assert before.backend == "speculative-0" and after.backend == "baseline-0"
    assert before.predicted_decode_raw_s is not None and after.predicted_decode_raw_s is not None
    assert before.predicted_e2e_s is not None and before.predicted_ttft_s is not None
    assert before.predicted_decode_raw_s == pytest.approx(before.predicted_e2e_s - before.predicted_ttft_s)
    both = dataclasses.replace(plain, estimates=dataclasses.replace(  # the baseline either way, priced 1.2x
        plain.estimates, tokens_per_step=1.0, decode_factor={"baseline": 1.2, "speculative": 1.2}))
    assert both.estimates is not None
    flat = dataclasses.replace(both, estimates=dataclasses.replace(both.estimates, decode_factor={}))
    d, d_flat = decide("adaptive", both, RULES, CFG), decide("adaptive", flat, RULES, CFG)
    assert d is not None and d_flat is not None and d.backend == d_flat.backend == "baseline-0"
    assert d.predicted_e2e_s is not None and d.predicted_ttft_s is not None and d_flat.predicted_decode_raw_s
    assert d.predicted_e2e_s - d.predicted_ttft_s == pytest.approx(1.2 * d_flat.predicted_decode_raw_s)
    assert d.predicted_decode_raw_s == pytest.approx(d_flat.predicted_decode_raw_s)


def test_a_pair_decides_as_before_whatever_the_factor() -> None:
    for load in (0.0, 1.0, 3.0, 8.0):
        for prompt in (200, 4000, 30000):
            pair = (PAIR[0]._replace(load=load), PAIR[1]._replace(co_runners=(("baseline", load),)))
            for regime in ("baseline", "speculative"):
                inp = _input(prompt, pair, output=300, regimes={"gpu0": regime})
                assert inp.estimates is not None
                biased = dataclasses.replace(inp, estimates=dataclasses.replace(
                    inp.estimates, decode_factor={"baseline": 0.7, "speculative": 1.6}))
                d = decide("adaptive", inp, RULES, CFG)
                assert d == decide("adaptive", biased, RULES, CFG)
                assert d is not None and d.predicted_decode_raw_s is None  # nothing for a pair to learn from
