"""A shared GPU saturated by prompts (results/code-burst-2026-12-06-l): every step of either server carries a chunk of
the queue's prompts, the same whichever server runs it, so a request costs its steps and one that speculates takes
fewer. Learned by `SharedStall`, priced by `costmodel.Stall` in the mix and the pair's predictions; the load cap does
not hold where it is at least the speculative server's own step (`saturation.prefill_bound`)."""

from __future__ import annotations

import dataclasses

import pytest

from gateway.core.candidate import Candidate
from gateway.core.costmodel import NO_STALL, ROLES, Role, Stall, StepModel
from gateway.core.decode_stall import SharedStall
from gateway.core.learner import Learner, Observation
from gateway.core.policy import Estimates, predict_on
from gateway.core.regime import (
    MixSample,
    RegimeConfig,
    RegimeState,
    SwitchPrice,
    capped_ratio,
    leave_large_batch,
    mix_costs,
    next_regime,
    ratio_of,
    settle,
)
from gateway.core.saturation import prefill_bound
from gateway.settings import Settings

# the H200 pair's steps as the gateway learned them on the family (docs/routing.md)
MODELS: dict[Role, StepModel] = {"baseline": StepModel(0.0045, 0.000087), "speculative": StepModel(0.0061, 0.00015)}
PREFILL: dict[Role, float] = {"baseline": 2.5e-5, "speculative": 2.5e-5}
CFG = RegimeConfig(switch_margin=0.05, min_dwell_s=10.0, externality_weight=1.0, decisive_margin=0.1,
                   free_drain_s=0.3, switch_cost_factor=1.0, speculation_max_load=16.0, leave_margin=0.0)
LOAD = 190.0  # the Azure code burst (840:40): its mean load on the GPU
STEP = 0.137  # ... and a baseline decode step there, measured (the step models say ~0.021)
# code answers of ~26 tokens that an n-gram drafter copies at 1.41 tokens a step, 2.2k-token prompts
CODE = [MixSample(2240, 26.0, 1.41, LOAD, 1.41)] * 64


def burst_stall() -> Stall:
    """What `SharedStall` learns from the burst's baseline responses: the step the models leave unexplained."""
    learned = SharedStall(forgetting=1.0, from_load=CFG.speculation_max_load)
    for _ in range(20):
        learned.observe(STEP * 25, 25, LOAD, MODELS["baseline"].own_s(LOAD))
    return learned.model()


def test_the_stall_is_what_the_step_model_leaves_per_request_beyond_the_cap() -> None:
    stall = burst_stall()
    assert stall.per_request_s == pytest.approx((STEP - MODELS["baseline"].own_s(LOAD)) / (LOAD - 16.0))
    assert stall.step_s(LOAD) == pytest.approx(STEP - MODELS["baseline"].own_s(LOAD))
    assert stall.step_s(16.0) == 0.0 and stall.step_s(3.0) == 0.0  # below the cap the step models hold
    quiet = SharedStall(forgetting=1.0, from_load=16.0)
    quiet.observe(0.2, 25, 8.0, 0.005)  # below the cap: not learned
    quiet.observe(0.1, 25, 40.0, 0.006)  # a step faster than the model: never a negative stall
    assert quiet.per_request_s() == 0.0


def test_a_gpu_saturated_by_prompts_is_priced_by_its_steps_and_the_cap_does_not_hold_it() -> None:
    """Seen on the Azure code burst (840:40) and code 1200:60: the n-gram server alone was 6% faster (decode 2.66 s
    against 3.43 s a request: 18.8 steps of 149 ms against 26 of 137), but the step models, fitted net of prefill, read
    it 14% dearer and the load cap held the baseline anyway: 1.065 / 1.059 and 1.054 / 1.062 the better static."""
    before = ratio_of(mix_costs(CODE, MODELS, PREFILL, 1.0))
    assert before < 1.0  # the old mix: the baseline
    stall = burst_stall()
    ratio = ratio_of(mix_costs(CODE, MODELS, PREFILL, 1.0, evidence=True, stall=stall))
    assert 1.1 < ratio < 1.41  # towards the steps' ratio, never past it
    assert prefill_bound(stall, MODELS, LOAD)
    assert capped_ratio(ratio, LOAD, CFG, saturated=True) == ratio
    assert (capped_ratio(ratio, LOAD, CFG) or 2.0) < 1.0  # unsaturated, the cap holds as before
    asked = next_regime(RegimeState(), ratio, 1.0, CFG, ratio)
    assert asked.pending == "speculative"
    taken = settle(asked, 1.0, SwitchPrice(0.0, 0.0, 1.0, LOAD), CFG, LOAD, saturated=True)
    assert taken.role == "speculative"
    assert settle(asked, 1.0, SwitchPrice(0.0, 0.0, 1.0, LOAD), CFG, LOAD).role == "baseline"  # capped as before
    assert leave_large_batch(taken, LOAD, 2.0, CFG, saturated=True).role == "speculative"
    assert leave_large_batch(taken, LOAD, 2.0, CFG).role == "baseline"


def test_a_decode_bound_flood_keeps_the_cap_and_copying_little_never_asks_for_speculation() -> None:
    """mixed-high's flood (short prompts, c = 40): nothing left unexplained, the cap holds. Creative answers that
    copy little (1.05 tokens a step) on a saturated GPU: the mix reads at most their steps' ratio, inside the band."""
    assert not prefill_bound(NO_STALL, MODELS, 40.0)
    small = Stall(0.00002, 16.0)  # 0.5 ms a step at 40 running: less than the speculative step's own 12 ms
    assert not prefill_bound(small, MODELS, 40.0)
    assert not prefill_bound(NO_STALL, MODELS, 40.0, prompts_s=0.4, span_s=1.0)  # 35/s of ~500-token prompts


def test_a_flood_of_prompts_saturates_before_its_first_answer_comes_back() -> None:
    """c2 of the code burst entered speculation 4 s before its flood; at the flood's onset (64 requests of 2.2k tokens
    within 1.4 s) no answer had taught the stall yet, and the load cap took the regime out, unpriced: 1.19x."""
    assert prefill_bound(NO_STALL, MODELS, 40.0, prompts_s=64 * 2240 * 2.5e-5, span_s=1.4)
    state = RegimeState("speculative", 2.9)
    assert leave_large_batch(state, 40.0, 8.4, CFG, saturated=True) == state
    creative = [MixSample(2240, 300.0, 1.05, LOAD, 1.05)] * 64
    assert ratio_of(mix_costs(creative, MODELS, PREFILL, 1.0, evidence=True, stall=burst_stall())) < 1.05


def test_a_saturated_pairs_prediction_carries_the_stall_and_a_light_one_does_not() -> None:
    """The switch's drain is the leaving server's requests' predicted ends: at 42 on the GPU, code 1200:60's burst
    answers were predicted at 0.11-0.2 s and took 3-4 s."""
    lrn = Learner(dataclasses.replace(Settings().learner_config(), priors=MODELS))
    stall = burst_stall()
    est = Estimates(output_tokens=26, tokens_per_step=1.0, step_models={r: lrn.step_model(r) for r in ROLES},
                    interference={r: lrn.interference(r) for r in ROLES},
                    prefill_s_per_token={r: lrn.prefill_s_per_token(r) for r in ROLES}, stall=stall)
    busy = Candidate("baseline-0", "baseline", "pair-0", LOAD - 1, co_runners=(("speculative", 0.0),))
    plain = dataclasses.replace(est, stall=NO_STALL)
    assert predict_on(busy, est, 2240, 1.0).e2e_s - predict_on(busy, plain, 2240, 1.0).e2e_s == pytest.approx(
        26 * stall.step_s(LOAD - 1), rel=0.01)
    light = Candidate("baseline-0", "baseline", "pair-0", 3.0, co_runners=(("speculative", 0.0),))
    assert predict_on(light, est, 2240, 1.0) == predict_on(light, plain, 2240, 1.0)


def test_the_learner_learns_it_from_a_pairs_responses_with_the_other_server_idle() -> None:
    """Above the cap the pair's own step models are not taught (what they would chase there is the queue's prompts:
    fitted, the baseline's slope grew until the stall read ~0, and the speculative server borrowed that slope at the
    priors' 1.7x); what they leave is the stall."""
    lrn = Learner(dataclasses.replace(Settings().learner_config(), priors=MODELS))
    ttft = 7.0
    for _ in range(40):
        lrn.observe(Observation("baseline", "code", "low", 2240, 26, 26, ttft, ttft + 25 * STEP, LOAD,
                                co_runners=(("speculative", 0.0),)))
    learned = lrn.shared_stall.per_request_s()
    assert learned == pytest.approx((STEP - MODELS["baseline"].own_s(LOAD)) / (LOAD - 16.0), rel=0.01)
    assert lrn.step_model("baseline") == MODELS["baseline"]  # not taught above the cap
    busy = Learner(dataclasses.replace(Settings().learner_config(), priors=MODELS))
    for _ in range(40):  # the other server running too: its waits are κ's, not the queue's prompts
        busy.observe(Observation("baseline", "code", "low", 2240, 26, 26, ttft, ttft + 25 * STEP, LOAD,
                                 co_runners=(("speculative", 5.0),)))
    assert busy.shared_stall.per_request_s() == 0.0
    off = Learner(dataclasses.replace(Settings(regime_saturation_stall=False).learner_config(), priors=MODELS))
    for _ in range(40):
        off.observe(Observation("baseline", "code", "low", 2240, 26, 26, ttft, ttft + 25 * STEP, LOAD,
                                co_runners=(("speculative", 0.0),)))
    assert off.shared_stall.per_request_s() == 0.0


def test_a_switch_on_a_saturated_gpu_is_priced_with_its_steps_alike() -> None:
    """c1 (the stall in the mix, not in the switch's price) took a switch into the code burst at 105 requests with a
    29-s drain against a 902-s gain, and read 1.19x the baseline alone. With the stall in both servers' steps, each
    side waits about a step of the other's for each of its own: priced near the strict alternation of equal steps,
    where the step models alone priced it at well under half of that."""
    from gateway.core.regime import SWITCH_INTERFERENCE, switch_price

    left = [29.0, 20.0, 10.0]
    plain = switch_price(left, MODELS, SWITCH_INTERFERENCE, "speculative", 105.0, 902.0)
    full = switch_price(left, MODELS, SWITCH_INTERFERENCE, "speculative", 105.0, 902.0, stall=burst_stall())
    assert 0.7 * (sum(left) + 105.0 * 29.0) < full.cost_s < sum(left) + 105.0 * 29.0
    assert plain.cost_s < 0.5 * full.cost_s and full.gain_s < full.cost_s


def test_a_gpu_saturated_by_prompts_stays_so_until_its_load_falls_to_the_cap() -> None:
    """c3 of the code burst: 14 s into its flood, 270 requests queued on the n-gram server, the arrivals had slowed
    below the GPU's prefill rate and the stall read small: the cap took the regime out, unpriced (1.36x)."""
    from gateway.core.saturation import still_saturated

    flood = (NO_STALL, MODELS)
    assert still_saturated(False, *flood, 40.0, 64 * 2240 * 2.5e-5, 1.4, CFG)  # the flood's onset
    assert still_saturated(True, *flood, 190.0, 0.4, 1.0, CFG)  # its queue, arrivals slowed
    assert not still_saturated(True, *flood, 12.0, 0.4, 1.0, CFG)  # drained to the cap
    assert not still_saturated(False, *flood, 190.0, 0.4, 1.0, CFG)  # a decode-bound flood never was
