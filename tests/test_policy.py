"""Pure policy, classifier and cost model: tables and properties, no I/O."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import features, step_models

from gateway.core.arrivals import known_rate
from gateway.core.classify import CLASSES, classify, temperature_bucket
from gateway.core.classify import features as extract
from gateway.core.costmodel import CoRunner, RequestShape, Role, StepModel, predict
from gateway.core.policy import (
    POLICY_NAMES,
    Candidate,
    Decision,
    Estimates,
    PolicyInput,
    PolicyName,
    decide,
    for_candidates,
    objective,
    predict_on,
    scoring_candidates,
)
from gateway.core.protocol import CHAT, COMPLETIONS, request_view
from gateway.settings import Settings

UNSEEN_SD = 0.58  # the learner's spread for a class nothing has measured (prior sd 1.0 over 3 prior observations)
CFG = Settings().classifier_config()
RULES = Settings().rules_config()
ADAPTIVE = dataclasses.replace(Settings().adaptive_config(), explore_rate=0.0, explore_unmeasured_rate=0.0)
BASE = StepModel(0.005, 0.00004)
SPEC = StepModel(0.0075, 0.00015)


def chat(content: str, **extra: object) -> dict[str, object]:
    return {"model": "m", "messages": [{"role": "user", "content": content}], **extra}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (chat("hi there, how are you?"), "chat"),
        (chat("Give me the result", response_format={"type": "json_object"}), "structured"),
        (chat("Give me the result", response_format={"type": "json_schema", "json_schema": {}}), "structured"),
        (chat("Call the tool", tools=[{"type": "function", "function": {"name": "f"}}]), "structured"),
        (chat("Answer", guided_json={"type": "object"}), "structured"),
        (chat("Write SQL: SELECT name FROM users WHERE id = 3"), "structured"),
        (chat("Return the answer as JSON with keys name and age"), "structured"),
        (chat("```python\ndef add(a, b):\n    return a - b\n```\nFix the bug."), "code"),
        (chat("Extract all dates from the following text: ..."), "extraction"),
        (chat("Write a poem about the sea", temperature=0.3), "creative"),
        (chat("Tell me about Paris", temperature=1.1), "creative"),
        (chat("x " * 8000), "long_context"),
        ({"model": "m", "prompt": "def fib(n):\n    "}, "code"),
        ({"model": "m", "prompt": [1, 2, 3]}, "chat"),
        # whole words only: "history" is no story, "trust" no Rust, "first class" no class definition
        (chat("Summarize the history of Rome", temperature=0.3), "chat"),
        (chat("I trust you: what is the capital of France?", temperature=0.3), "chat"),
        (chat("Is first class worth it on a long flight?", temperature=0.3), "chat"),
        (chat("class Stack:\n    pass\nAdd push and pop."), "code"),
        (chat("Tell me a story (short, please)", temperature=0.3), "creative"),
    ],
)
def test_classifier_table(body: dict[str, object], expected: str) -> None:
    endpoint = CHAT if "messages" in body else COMPLETIONS
    f = extract(request_view(endpoint, body), CFG)
    assert classify(f, CFG) == expected


def test_temperature_buckets() -> None:
    assert [temperature_bucket(t) for t in (0.0, 0.3, 0.7, 1.5)] == ["greedy", "low", "high", "high"]


def _inp(f: object, cls: str, base_load: int = 0, spec_load: int = 0, tps: float = 3.0, output: float = 256,
         available: frozenset[str] = frozenset({"baseline", "speculative"}), draw: float = 1.0,
         models: tuple[StepModel, StepModel] = (BASE, SPEC), interference: float = 0.8, shared: bool = False,
         regime: Role = "baseline", observations: int = 0, sd: float = 0.0) -> PolicyInput:
    """A baseline and a speculative backend: each with a GPU of its own, or (`shared`) a pair on one GPU whose
    regime is `regime`."""
    est = Estimates(output, tps, {"baseline": models[0], "speculative": models[1]},
                    {"baseline": interference, "speculative": interference},
                    {"baseline": 0.00004, "speculative": 0.00004}, sd, observations)
    group = "gpu0"
    cands = []
    if "baseline" in available:
        cands.append(Candidate("baseline-0", "baseline", group if shared else "gpu-b", base_load,
                               (("speculative", float(spec_load)),) if shared else ()))
    if "speculative" in available:
        cands.append(Candidate("speculative-0", "speculative", group if shared else "gpu-s", spec_load,
                               (("baseline", float(base_load)),) if shared else ()))
    bucket = temperature_bucket(f.temperature)  # type: ignore[attr-defined]
    return PolicyInput(f, cls, bucket, tuple(cands), est, {group: regime} if shared else {}, {},  # type: ignore[arg-type]
                       draw)


def _decide(policy: PolicyName, inp: PolicyInput) -> Decision:
    d = decide(policy, inp, RULES, ADAPTIVE)
    assert d is not None
    return d


@given(features(), st.sampled_from(CLASSES), st.sampled_from(POLICY_NAMES), st.booleans())
def test_n_greater_than_one_never_goes_speculative(f: object, cls: str, policy: PolicyName, shared: bool) -> None:
    f = dataclasses.replace(f, n=2)  # type: ignore[type-var]
    d = _decide(policy, _inp(f, cls, shared=shared))
    assert d.role == "baseline" and d.reason == "n_gt_1"


@given(features(n=1), st.sampled_from(CLASSES), st.floats(0.0, 2.0), st.floats(0.0, 2.0), st.integers(0, 64))
def test_rules_raising_temperature_never_moves_toward_speculative(f: object, cls: str, t1: float, t2: float,
                                                                  load: int) -> None:
    lo, hi = sorted((t1, t2))
    d_lo = _decide("rules", _inp(dataclasses.replace(f, temperature=lo), cls, spec_load=load))  # type: ignore[type-var]
    d_hi = _decide("rules", _inp(dataclasses.replace(f, temperature=hi), cls, spec_load=load))  # type: ignore[type-var]
    assert not (d_lo.role == "baseline" and d_hi.role == "speculative")


def test_rules_table() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0)), CFG)
    assert _decide("rules", _inp(f, "structured")).reason == "rule_structured"
    assert _decide("rules", _inp(f, "structured", spec_load=16)).reason == "rule_busy"
    assert _decide("rules", _inp(f, "chat")).reason == "rule_default"
    hot = dataclasses.replace(f, temperature=1.0)
    assert _decide("rules", _inp(hot, "structured")).reason == "rule_creative"
    long = dataclasses.replace(f, prompt_tokens=5000)
    assert _decide("rules", _inp(long, "structured")).reason == "rule_long_prompt"


def test_availability_constraints() -> None:
    f = extract(request_view(CHAT, chat("hi", temperature=0)), CFG)
    only_base = _decide("speculative", _inp(f, "chat", available=frozenset({"baseline"})))
    assert (only_base.role, only_base.reason) == ("baseline", "no_speculative")
    only_spec = _decide("baseline", _inp(f, "chat", available=frozenset({"speculative"})))
    assert (only_spec.role, only_spec.reason) == ("speculative", "only_available")
    assert decide("adaptive", _inp(f, "chat", available=frozenset()), RULES, ADAPTIVE) is None


def test_round_robin_and_least_loaded() -> None:
    f = extract(request_view(CHAT, chat("hi", temperature=0)), CFG)
    inp = _inp(f, "chat", base_load=3, spec_load=1)
    turns = [decide("round_robin", dataclasses.replace(inp, turn=t), RULES, ADAPTIVE) for t in range(4)]
    assert [d.backend for d in turns if d] == ["baseline-0", "speculative-0"] * 2
    assert _decide("least_loaded", inp).backend == "speculative-0"
    assert _decide("least_loaded", _inp(f, "chat", base_load=0, spec_load=1)).backend == "baseline-0"


def test_hindsight_follows_its_map() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0)), CFG)
    inp = _inp(f, "structured")
    d = decide("hindsight", inp, RULES, ADAPTIVE, {"structured/greedy": "speculative"})
    assert d is not None and d.role == "speculative" and d.reason == "hindsight"
    d = decide("hindsight", dataclasses.replace(inp, task_class="chat"), RULES, ADAPTIVE,
               {"structured/greedy": "speculative"})
    assert d is not None and d.role == "baseline"


def test_fleet_picks_the_least_loaded_of_a_role_and_the_cheapest_backend() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0)), CFG)
    inp = _inp(f, "structured", tps=3.3)
    est = inp.estimates
    cands = (Candidate("baseline-0", "baseline", "g0", 0), Candidate("speculative-0", "speculative", "g1", 9),
             Candidate("speculative-1", "speculative", "g2", 2), Candidate("baseline-1", "baseline", "g3", 5))
    d = decide("adaptive", dataclasses.replace(inp, candidates=cands), RULES, ADAPTIVE)
    assert d is not None and d.backend == "speculative-1" and d.role == "speculative"
    assert est is not None
    slow = dataclasses.replace(est, tokens_per_step=1.0)
    d = decide("adaptive", dataclasses.replace(inp, candidates=cands, estimates=slow), RULES, ADAPTIVE)
    assert d is not None and d.backend == "baseline-0"


def test_shared_group_follows_its_regime_and_probes_only_what_it_keeps_idle() -> None:
    """On one GPU the pair is carried by one server at a time: a request that would be cheaper right now on the
    other server still goes to the regime's server (the comparison right now is sticky), except a bounded probe."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    on_spec = _decide("adaptive", _inp(f, "structured", spec_load=3, tps=1.0, shared=True, regime="speculative"))
    assert on_spec.role == "speculative" and on_spec.reason == "regime_speculative"
    on_base = _decide("adaptive", _inp(f, "structured", base_load=3, tps=4.0, shared=True, regime="baseline"))
    assert on_base.role == "baseline" and on_base.reason == "regime_baseline"
    # nothing running on the GPU: the request's cheaper server, whatever the regime (it slows nobody)
    idle = _decide("adaptive", _inp(f, "structured", tps=4.0, shared=True, regime="baseline"))
    assert idle.role == "speculative" and idle.reason == "predicted_faster"
    cfg = dataclasses.replace(ADAPTIVE, explore_unmeasured_rate=0.25, explore_unmeasured_max_regret=3.0)
    probe = decide("adaptive", _inp(f, "structured", tps=1.2, output=64, shared=True, draw=0.1, sd=UNSEEN_SD),
                   RULES, cfg)
    assert probe is not None and probe.role == "speculative" and probe.reason == "explore"
    busy = decide("adaptive", _inp(f, "structured", tps=1.2, output=64, shared=True, draw=0.1, spec_load=1,
                                   sd=UNSEEN_SD), RULES, cfg)
    assert busy is not None and busy.role == "baseline"  # one probe at a time


def test_no_first_probe_that_could_not_change_a_decision() -> None:
    """Seen on creative-heavy: probes of creative text at temperature 1 on an idle n-gram server (predicted 1.5x
    slower) slowed the requests beside them on the shared GPU, 3.6 s in one run. A first probe goes out only if
    speculation would win at an acceptance `explore_hope_sd` posterior sd above the estimate."""
    f = extract(request_view(CHAT, chat("Write a poem", temperature=1.0, max_tokens=64)), CFG)
    cfg = dataclasses.replace(ADAPTIVE, explore_unmeasured_rate=0.25, explore_unmeasured_max_regret=3.0)
    unsure = decide("adaptive", _inp(f, "creative", tps=1.2, output=64, shared=True, draw=0.1, sd=UNSEEN_SD),
                    RULES, cfg)
    assert unsure is not None and unsure.reason == "explore"
    narrow = decide("adaptive", _inp(f, "creative", tps=1.05, output=64, shared=True, draw=0.1, sd=0.14), RULES, cfg)
    assert narrow is not None and narrow.role == "baseline" and narrow.reason != "explore"
    bold = decide("adaptive", _inp(f, "creative", tps=1.05, output=64, shared=True, draw=0.1, sd=0.14), RULES,
                  dataclasses.replace(cfg, explore_hope_sd=10.0))
    assert bold is not None and bold.reason == "explore"


def test_no_first_probe_of_a_class_too_rare_to_move_the_regime() -> None:
    """Seen on creative-heavy (mix 0.8x): each probe of a structured or long-context request cost ~1 s over its
    neighbours (the requests arriving while it ran time-shared the GPU with it), 1-2% of the run, and no answer
    could have moved the regime. The router lists the classes whose hoped-for acceptance could (`worth_probing`)."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    cfg = dataclasses.replace(ADAPTIVE, explore_unmeasured_rate=0.25, explore_unmeasured_max_regret=3.0)
    quiet = _inp(f, "structured", tps=1.2, output=64, shared=True, draw=0.1, sd=UNSEEN_SD)
    for worthy, probed in ((None, True), (frozenset({("structured", "greedy")}), True),
                           (frozenset({("creative", "high")}), False)):
        inp = quiet if worthy is None else dataclasses.replace(quiet, probe_worthy={"gpu0": worthy})
        d = decide("adaptive", inp, RULES, cfg)
        assert d is not None and (d.reason == "explore") == probed, worthy


def test_a_light_gpu_lets_a_request_leave_the_regime_only_for_a_clear_gain() -> None:
    """Seen on an H200 at 1.5 requests/s (dummy weights: greedy output drafts at 3 tokens per step, sampled output
    at 1): the regime held every request on the n-gram server, sampled ones 1.7x slower there. On a GPU running
    at most `exception_load` requests a request takes its cheaper server when that wins by `exception_margin`."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    greedy = _decide("adaptive", _inp(f, "structured", base_load=1, tps=4.0, regime="baseline", shared=True,
                                       interference=0.2))
    assert greedy.role == "speculative" and greedy.reason == "predicted_faster"
    busier = _decide("adaptive", _inp(f, "structured", base_load=3, tps=4.0, regime="baseline", shared=True,
                                       interference=0.2))
    assert busier.role == "baseline" and busier.reason == "regime_baseline"
    strict = dataclasses.replace(ADAPTIVE, exception_margin=10.0)  # a gain below the margin stays in the regime
    kept = decide("adaptive", _inp(f, "structured", base_load=1, tps=4.0, regime="baseline", shared=True,
                                       interference=0.2), RULES, strict)
    assert kept is not None and kept.role == "baseline" and kept.reason == "regime_baseline"
    sampled = _decide("adaptive", _inp(f, "structured", spec_load=1, tps=1.0, regime="speculative", shared=True,
                                       interference=0.0))
    assert sampled.role == "baseline" and sampled.reason == "predicted_faster"
    # co-running costs both servers (each step waits for the other's): then a small gain does not leave the regime
    costly = _decide("adaptive", _inp(f, "structured", spec_load=1, tps=1.0, regime="speculative", shared=True,
                                      interference=0.8))
    assert costly.role == "speculative"


def test_no_exception_to_the_regime_when_requests_will_arrive_during_it() -> None:
    """Seen on the bursty trace: sampled requests sent to an idle baseline (the GPU was quiet) ran ~1.5 s, the
    next burst went to the speculative regime and time-shared the GPU with them: adaptive 0.86 s against 0.69 s
    all-speculative. An exception needs few of the group's arrivals expected while it runs."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    quiet = _inp(f, "structured", tps=4.0, shared=True, regime="baseline")
    assert _decide("adaptive", quiet).role == "speculative"
    busy_soon = dataclasses.replace(quiet, arrival_rates={"gpu0": 50.0})
    d = _decide("adaptive", busy_soon)
    assert d.role == "baseline" and d.reason == "regime_baseline"


def test_no_probe_on_a_gpu_past_the_speculation_load_cap() -> None:
    """Seen on mixed-high: probes of unmeasured classes at 70-80 requests running (and one at the second request
    of a 35 requests/s flood) slowed the whole batch, the queue never drained: 2.0 s against 0.99 s. The regime
    does not speculate there anyway."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    cfg = dataclasses.replace(ADAPTIVE, explore_unmeasured_rate=0.25, explore_unmeasured_max_regret=3.0)
    quiet = _inp(f, "structured", tps=1.2, output=64, shared=True, draw=0.1, sd=UNSEEN_SD)
    probe = decide("adaptive", quiet, RULES, cfg)
    assert probe is not None and probe.reason == "explore"
    busy = decide("adaptive", _inp(f, "structured", 40, tps=1.2, output=64, shared=True, draw=0.1, sd=UNSEEN_SD),
                  RULES, cfg)
    assert busy is not None and busy.reason != "explore"
    flood = decide("adaptive", dataclasses.replace(quiet, arrival_rates={"gpu0": 500.0}), RULES, cfg)
    assert flood is not None and flood.reason != "explore"


def test_an_unknown_arrival_rate_stops_probes_and_exceptions() -> None:
    """Seen on mixed-high at time scale 4: a probe at the second request (the rate read from one arrival: 0)
    ran beside the start of a 35 requests/s flood and slowed the whole run 16%. Before `RATE_MIN_ARRIVALS`
    decisions the policy reads the rate as infinite: no probe, no exception to the regime."""
    assert known_rate([0.0, 0.1, 0.2], 0.3) == math.inf
    assert known_rate([0.0, 0.1, 0.2, 0.3], 0.3) == pytest.approx(10.0)
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    cfg = dataclasses.replace(ADAPTIVE, explore_unmeasured_rate=0.25, explore_unmeasured_max_regret=3.0)
    quiet = _inp(f, "structured", tps=1.2, output=64, shared=True, draw=0.1, sd=UNSEEN_SD)
    assert decide("adaptive", quiet, RULES, cfg).reason == "explore"  # type: ignore[union-attr]
    unknown = decide("adaptive", dataclasses.replace(quiet, arrival_rates={"gpu0": math.inf}), RULES, cfg)
    assert unknown is not None and unknown.role == "baseline" and unknown.reason != "explore"
    cheaper = _inp(f, "structured", tps=4.0, shared=True, regime="baseline")
    assert _decide("adaptive", cheaper).role == "speculative"
    held = _decide("adaptive", dataclasses.replace(cheaper, arrival_rates={"gpu0": math.inf}))
    assert held.role == "baseline" and held.reason == "regime_baseline"


def test_a_measured_class_is_probed_on_a_shared_gpu_only_while_the_gpu_is_quiet() -> None:
    """A probe co-runs with the regime's batch and slows all of it (creative-heavy: one 114-token probe cost the
    five baseline requests beside it ~0.3 s each); once a class is measured, probes wait for a quiet GPU."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    cfg = dataclasses.replace(ADAPTIVE, explore_rate=0.5, explore_max_regret=3.0, explore_min_observations=0)
    quiet = decide("adaptive", _inp(f, "structured", tps=1.2, output=64, shared=True, draw=0.1, observations=5),
                   RULES, cfg)
    assert quiet is not None and quiet.reason == "explore"
    busy = decide("adaptive", _inp(f, "structured", 2, tps=1.2, output=64, shared=True, draw=0.1, observations=5),
                  RULES, cfg)
    assert busy is not None and busy.role == "baseline" and busy.reason != "explore"
    own_gpus = decide("adaptive", _inp(f, "structured", 2, tps=1.2, output=64, draw=0.1, observations=5), RULES,
                      dataclasses.replace(cfg, thompson=False))
    assert own_gpus is not None and own_gpus.reason == "explore"  # a probe there slows nobody else


@given(st.integers(1, 8000), st.floats(1.0, 3000.0), st.floats(1.0, 5.0), st.integers(0, 128), st.integers(0, 128),
       step_models, step_models, st.integers(0, 32))
def test_more_speculative_load_never_makes_speculative_faster(prompt: int, out: float, tps: float, spec_load: int,
                                                              base_load: int, m_spec: StepModel, m_base: StepModel,
                                                              extra: int) -> None:
    shape = RequestShape(prompt, out, tps)
    co = (CoRunner(m_base, base_load, 0.8),)
    a = predict(shape, spec_load, m_spec, 0.8, 4e-5, co)
    b = predict(shape, spec_load + extra, m_spec, 0.8, 4e-5, co)
    assert b.e2e_s >= a.e2e_s - 1e-12 and b.ttft_s >= a.ttft_s - 1e-12
    # The charge for the other server's wait is a per-capita share of our step: it may shrink as more requests
    # share our server, but never below the step's growth and never above the whole step's turn-on charge.
    for p, ls in ((a, spec_load), (b, spec_load + extra)):
        steps = max(out - 1.0, 0.0) / tps + 1.0
        on_self = ls * m_spec.per_request_s * steps
        scale = base_load * 0.8 * p.e2e_s / m_base.own_s(base_load) if base_load else 0.0
        assert (on_self + scale * m_spec.per_request_s) * (1 - 1e-9) - 1e-12 <= p.externality_s
        assert p.externality_s <= (on_self + scale * max(m_spec.own_s(1), m_spec.per_request_s)) * (1 + 1e-9) + 1e-12


@given(features(n=1), st.integers(0, 64), st.integers(0, 64), st.integers(1, 32))
def test_more_speculative_load_never_flips_adaptive_toward_speculative_on_a_fleet(
        f: object, base_load: int, spec_load: int, extra: int) -> None:
    d1 = _decide("clairvoyant", _inp(f, "chat", base_load, spec_load))
    d2 = _decide("clairvoyant", _inp(f, "chat", base_load, spec_load + extra))
    assert not (d1.role == "baseline" and d2.role == "speculative")


@given(features(n=1), st.integers(0, 64), st.integers(0, 64), step_models, step_models)
def test_no_acceptance_never_prefers_speculative(f: object, base_load: int, spec_load: int, mb: StepModel,
                                                 ms: StepModel) -> None:
    # α → 0: one token per step; speculative steps cost at least as much as baseline steps.
    ms = ms._replace(base_s=max(ms.base_s, mb.base_s), per_request_s=max(ms.per_request_s,
                                                                                       mb.per_request_s))
    d = _decide("clairvoyant", _inp(f, "chat", base_load, spec_load, tps=1.0, models=(mb, ms)))
    if base_load >= spec_load:
        assert d.role == "baseline" or (d.ratio is not None and d.ratio > 1.0)


def test_thompson_sampling_explores_an_uncertain_class_and_stops_once_it_is_known() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=256)), CFG)
    draws = [(i + 0.5) / 200 for i in range(200)]

    def share(tps: float, sd: float) -> float:
        inp = _inp(f, "structured", tps=tps, sd=sd, output=96)
        picks = [_decide("adaptive", dataclasses.replace(inp, sample_draw=u)).role for u in draws]
        return picks.count("speculative") / len(picks)

    uncertain, known_bad, known_good = share(1.2, 0.6), share(1.2, 0.02), share(3.0, 0.02)
    assert 0.05 < uncertain < 0.8, uncertain
    assert known_bad == 0.0 and known_good == 1.0


def test_a_measured_class_is_routed_on_its_mean_however_wide_its_spread() -> None:
    """Thompson sampling explores a class (or temperature bucket) with fewer than `explore_min_observations`
    speculative responses; once measured, every draw routes on the mean. The spread of a measured class stays wide
    (azure-code-b: code at 1.0-4.5 tokens a step; the learner's spread of code/greedy 0.30 after 30 responses), and
    sampling it only flipped the requests near the break-even both ways; docs/routing.md says a measured class is
    routed on its mean."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=256)), CFG)
    draws = [(i + 0.5) / 100 for i in range(100)]
    base = _inp(f, "structured", tps=1.2, sd=0.6, output=96)
    mean = base.estimates
    assert mean is not None

    def roles(class_obs: int, bucket_obs: int) -> set[str]:
        est = dataclasses.replace(mean, speculative_observations=class_obs, bucket_speculative_observations=bucket_obs)
        inp = dataclasses.replace(base, estimates=est)
        return {_decide("adaptive", dataclasses.replace(inp, sample_draw=u)).role for u in draws}

    n = ADAPTIVE.explore_min_observations
    assert roles(n, n) == {_decide("adaptive", dataclasses.replace(base, sample_draw=0.5)).role} == {"baseline"}
    assert roles(n - 1, 40) == roles(40, n - 1) == roles(0, 0) == {"baseline", "speculative"}


def test_a_thompson_pick_predicts_with_the_posterior_mean() -> None:
    """A speculative server chosen on an optimistic sample is predicted at the mean acceptance: the sample that won
    is high by selection, and predicting with it read speculative requests' latency systematically fast."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=256)), CFG)
    inp = _inp(f, "structured", tps=1.2, sd=0.6, output=96)
    lucky = _decide("adaptive", dataclasses.replace(inp, sample_draw=0.999))
    assert lucky.role == "speculative"
    expected = predict(RequestShape(f.prompt_tokens, 96, 1.2), 0, SPEC, 0.8, 0.00004, (), 0.0, stall=True)
    assert lucky.predicted_e2e_s == pytest.approx(expected.e2e_s)


def test_thompson_sampling_samples_only_requests_expected_short() -> None:
    """azure-conv-a, 2 + 2 (results/fleet-peers-2026-12-06-j): chat, rarely sent to a speculative server and so never
    measured, was sampled on every request, and a lucky draw sent 400-600-token answers there at 1.0 tokens a step
    (0.7-1.2 s each over the baseline). A draw's cost grows with the answer, what it teaches does not: only a request
    expected as short as a probe (`explore_max_output_tokens`) is sampled."""
    f = extract(request_view(CHAT, chat("Tell me about Rome", temperature=0.8, max_tokens=1024)), CFG)
    draws = [(i + 0.5) / 100 for i in range(100)]
    short, long = ADAPTIVE.explore_max_output_tokens, 4 * ADAPTIVE.explore_max_output_tokens

    def roles(output: float) -> set[str]:
        inp = _inp(f, "chat", tps=1.2, sd=0.6, output=output)
        return {_decide("adaptive", dataclasses.replace(inp, sample_draw=u)).role for u in draws}

    assert roles(short) == {"baseline", "speculative"}
    assert roles(long) == {"baseline"}


def test_no_acceptance_with_equal_load_goes_baseline() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0)), CFG)
    for load in (0, 4, 16, 64):
        assert _decide("adaptive", _inp(f, "structured", load, load, tps=1.0)).role == "baseline"


@given(st.integers(1, 8000), st.floats(1.0, 2000.0), st.floats(0.0, 2000.0), st.floats(1.0, 5.0),
       st.integers(0, 64), st.integers(0, 64))
def test_predictions_monotone_in_output_length(prompt: int, out: float, more: float, tps: float,
                                               ls: int, lo: int) -> None:
    co = (CoRunner(BASE, lo, 0.8),)
    a = predict(RequestShape(prompt, out, tps), ls, SPEC, 0.8, 4e-5, co)
    b = predict(RequestShape(prompt, out + more, tps), ls, SPEC, 0.8, 4e-5, co)
    assert b.e2e_s >= a.e2e_s and b.ttft_s == a.ttft_s


def test_adaptive_table_speculation_pays_at_low_load_not_at_high() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0)), CFG)
    low = _decide("adaptive", _inp(f, "structured", 0, 0, tps=3.3))
    assert low.role == "speculative" and low.reason == "predicted_faster"
    assert low.detail.startswith("predicted_faster ")
    assert "x on speculative at 3.30 tokens/step (class), speculative-0@gpu-s" in low.detail
    busy = _decide("adaptive", _inp(f, "structured", 0, 48, tps=1.4))  # spec loaded, low acceptance
    assert busy.role == "baseline"


@settings(max_examples=300)
@given(features(n=1), st.floats(0.0, 0.999), st.integers(0, 32), st.integers(0, 32), st.floats(1.0, 5.0),
       st.floats(1.0, 512.0), st.booleans())
def test_exploration_is_bounded_by_rate_regret_and_length(f: object, draw: float, bl: int, sl: int, tps: float,
                                                          out: float, shared: bool) -> None:
    cfg = dataclasses.replace(ADAPTIVE, explore_rate=0.05, explore_max_regret=1.5, explore_min_observations=0)
    inp = _inp(f, "chat", bl, sl, tps=tps, draw=draw, output=out, shared=shared)
    d = decide("adaptive", inp, RULES, cfg)
    assert d is not None
    if d.reason == "explore":
        assert draw < 0.05 and inp.estimates is not None and inp.estimates.output_tokens <= 128
        assert d.role == "speculative" and sl == 0


@settings(max_examples=200)
@given(features(n=1), st.lists(st.tuples(st.sampled_from(["baseline", "speculative"]), st.integers(0, 6),
                                         st.integers(0, 20), st.integers(0, 20)), min_size=2, max_size=10),
       st.floats(1.0, 5.0))
def test_scoring_only_the_candidates_that_can_win_changes_no_decision(
        f: object, rows: list[tuple[Role, int, int, int]], tps: float) -> None:
    """Pruning (least-loaded own-GPU backend per role; shared backends on the Pareto front of their loads) picks a
    backend whose predicted cost equals the cheapest over all candidates of its role."""
    cands = []
    for i, (role, group, load, co_load) in enumerate(rows):
        shared = group < 3
        other: Role = "speculative" if role == "baseline" else "baseline"
        cands.append(Candidate(f"{role}-{i}", role, f"g{group}" if shared else f"own{i}", load,
                               ((other, float(co_load)),) if shared else ()))
    base_inp = _inp(f, "structured", tps=tps)
    regimes: dict[str, Role] = {f"g{g}": "baseline" for g in range(3)}
    inp = dataclasses.replace(base_inp, candidates=tuple(cands), regimes=regimes)
    d = decide("clairvoyant", inp, RULES, ADAPTIVE)
    assert d is not None and base_inp.estimates is not None
    est = base_inp.estimates
    eligible = [c for c in cands if not c.shared or c.role == "baseline"  # the regime's role, or a quiet GPU
                or (c.load == 0 and all(load == 0 for _, load in c.co_runners))]
    assume(len({c.role for c in eligible}) == 2)
    chosen = next(c for c in cands if c.name == d.backend)
    same_role = [c for c in eligible if c.role == chosen.role]
    cfg = for_candidates(ADAPTIVE, cands)  # on a fleet of own GPUs the objective weighs TTFT (`fleet_ttft_weight`)
    best = min(objective(predict_on(c, est, f.prompt_tokens, tps), cfg) for c in same_role)  # type: ignore[attr-defined]
    assert objective(predict_on(chosen, est, f.prompt_tokens, tps), cfg) == pytest.approx(best)  # type: ignore[attr-defined]
    # the router passes the pruned candidates it computed for the same candidates and regimes: the same decision
    given = dataclasses.replace(inp, scoring=scoring_candidates(inp.candidates, inp.regimes, ADAPTIVE.exception_load))
    for policy in ("clairvoyant", "adaptive"):
        assert decide(policy, given, RULES, ADAPTIVE) == decide(policy, inp, RULES, ADAPTIVE)


def test_a_probe_on_a_shared_gpu_waits_like_an_exception_for_few_arrivals() -> None:
    """Seen on a real H200 (2026-12-06): probes sent to the idle n-gram server at 1.5 requests/s ran 1.5-1.9x slower
    than alone and the four baseline requests that arrived during one ran 1.4-2.1 s against ~1.0 (+5% on the phase).
    A probe leaves the regime like an exception does: only while at most `exception_arrivals` of the group's
    requests are expected to arrive during it (they time-share the GPU with it), not up to the load cap."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    cfg = dataclasses.replace(ADAPTIVE, explore_unmeasured_rate=0.25, explore_unmeasured_max_regret=3.0)
    quiet = _inp(f, "structured", tps=1.2, output=64, shared=True, draw=0.1, sd=UNSEEN_SD)
    probe = decide("adaptive", dataclasses.replace(quiet, arrival_rates={"gpu0": 0.1}), RULES, cfg)
    assert probe is not None and probe.reason == "explore"
    assert probe.predicted_e2e_s is not None
    rate = 2.0 * cfg.exception_arrivals / probe.predicted_e2e_s  # two arrivals' worth of the bound during it
    assert rate * probe.predicted_e2e_s < cfg.probe_max_load  # below the load cap: the old bound let it through
    busy = decide("adaptive", dataclasses.replace(quiet, arrival_rates={"gpu0": rate}), RULES, cfg)
    assert busy is not None and busy.role == "baseline" and busy.reason != "explore"
