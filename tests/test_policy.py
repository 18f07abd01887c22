"""Pure policy, classifier and cost model: tables and properties, no I/O."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import features, step_models

from gateway.classify import CLASSES, ClassifierConfig, classify, temperature_bucket
from gateway.classify import features as extract
from gateway.costmodel import Load, RequestShape, StepModel, predict
from gateway.policy import AdaptiveConfig, Decision, Estimates, PolicyInput, RulesConfig, decide
from gateway.protocol import CHAT, COMPLETIONS, request_view

CFG = ClassifierConfig()
RULES = RulesConfig()
ADAPTIVE = AdaptiveConfig(explore_rate=0.0)
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
         models: tuple[StepModel, StepModel] = (BASE, SPEC), interference: float = 0.8) -> PolicyInput:
    est = Estimates(output, tps, models[0], models[1], interference, interference, 0.00004, 0.00004)
    return PolicyInput(f, cls, available, Load(base_load), Load(spec_load), est, draw)  # type: ignore[arg-type]


def _decide(policy: str, inp: PolicyInput) -> Decision:
    d = decide(policy, inp, RULES, ADAPTIVE)
    assert d is not None
    return d


@given(features(), st.sampled_from(CLASSES), st.sampled_from(["baseline", "speculative", "rules", "adaptive",
                                                            "clairvoyant"]))
def test_n_greater_than_one_never_goes_speculative(f: object, cls: str, policy: str) -> None:
    f = dataclasses.replace(f, n=2)  # type: ignore[type-var]
    d = _decide(policy, _inp(f, cls))
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


@given(st.integers(1, 8000), st.floats(1.0, 3000.0), st.floats(1.0, 5.0), st.integers(0, 128), st.integers(0, 128),
       step_models, step_models, st.integers(0, 32))
def test_more_speculative_load_never_makes_speculative_faster(prompt: int, out: float, tps: float, spec_load: int,
                                                              base_load: int, m_spec: StepModel, m_base: StepModel,
                                                              extra: int) -> None:
    shape = RequestShape(prompt, out, tps)
    a = predict("speculative", shape, Load(spec_load), Load(base_load), m_spec, m_base, 0.8, 0.8, 4e-5)
    b = predict("speculative", shape, Load(spec_load + extra), Load(base_load), m_spec, m_base, 0.8, 0.8, 4e-5)
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
def test_more_speculative_load_never_flips_adaptive_toward_speculative_without_interference(
        f: object, base_load: int, spec_load: int, extra: int) -> None:
    d1 = _decide("adaptive", _inp(f, "chat", base_load, spec_load, interference=0.0))
    d2 = _decide("adaptive", _inp(f, "chat", base_load, spec_load + extra, interference=0.0))
    assert not (d1.role == "baseline" and d2.role == "speculative")


@given(features(n=1), st.integers(0, 64), st.integers(0, 64), step_models, step_models)
def test_no_acceptance_never_prefers_speculative(f: object, base_load: int, spec_load: int, mb: StepModel,
                                                 ms: StepModel) -> None:
    # α → 0: one token per step; speculative steps cost at least as much as baseline steps.
    ms = dataclasses.replace(ms, base_s=max(ms.base_s, mb.base_s), per_request_s=max(ms.per_request_s,
                                                                                       mb.per_request_s))
    d = _decide("adaptive", _inp(f, "chat", base_load, spec_load, tps=1.0, models=(mb, ms)))
    if base_load >= spec_load:
        assert d.role == "baseline" or (d.ratio is not None and d.ratio > 1.0)


def test_unmeasured_class_is_probed_at_a_higher_regret() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=64)), CFG)
    cfg = AdaptiveConfig(explore_rate=0.05, explore_max_regret=1.1, explore_unmeasured_max_regret=3.0)
    inp = _inp(f, "structured", 0, 0, tps=1.0, output=64, draw=0.01)
    assert inp.estimates is not None and inp.estimates.speculative_observations == 0
    unmeasured = decide("adaptive", inp, RULES, cfg)
    assert unmeasured is not None and unmeasured.reason == "explore" and unmeasured.role == "speculative"
    measured = dataclasses.replace(inp, estimates=dataclasses.replace(inp.estimates, speculative_observations=10))
    d = decide("adaptive", measured, RULES, cfg)
    assert d is not None and d.role == "baseline"


def test_unmeasured_probes_are_short_one_at_a_time_and_at_their_own_rate() -> None:
    """The H200 lesson: a prior that makes speculation look slow must still be tested, at a rate that reaches
    `explore_min_observations` probes within a short run; but a probe is served slower and slows the baseline
    while it runs, so only short requests, never two at once, and never when the regret cap (which counts the
    probe's externality) says a busy baseline would pay too much."""
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0, max_tokens=256)), CFG)
    cfg = AdaptiveConfig(explore_rate=0.0, explore_unmeasured_rate=0.25, explore_unmeasured_max_regret=3.0)
    idle = _inp(f, "structured", 0, 0, tps=1.2, output=100, draw=0.2)
    d = decide("adaptive", idle, RULES, cfg)
    assert d is not None and d.role == "speculative" and d.reason == "explore"
    long = dataclasses.replace(idle.estimates, output_tokens=256)  # type: ignore[arg-type]
    # a probe in flight; a draw above the rate; a busy baseline; a long request
    for changed in (dict(speculative_load=Load(1)), dict(draw=0.3), dict(baseline_load=Load(24)),
                    dict(estimates=long)):
        d = decide("adaptive", dataclasses.replace(idle, **changed), RULES, cfg)  # type: ignore[arg-type]
        assert d is not None and d.reason != "explore", changed


def test_no_acceptance_with_equal_load_goes_baseline() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0)), CFG)
    for load in (0, 4, 16, 64):
        assert _decide("adaptive", _inp(f, "structured", load, load, tps=1.0)).role == "baseline"


@given(st.integers(1, 8000), st.floats(1.0, 2000.0), st.floats(0.0, 2000.0), st.floats(1.0, 5.0),
       st.sampled_from(["baseline", "speculative"]), st.integers(0, 64), st.integers(0, 64))
def test_predictions_monotone_in_output_length(prompt: int, out: float, more: float, tps: float, role: str,
                                               ls: int, lo: int) -> None:
    a = predict(role, RequestShape(prompt, out, tps), Load(ls), Load(lo), SPEC, BASE, 0.8, 0.8, 4e-5)
    b = predict(role, RequestShape(prompt, out + more, tps), Load(ls), Load(lo), SPEC, BASE, 0.8, 0.8, 4e-5)
    assert b.e2e_s >= a.e2e_s and b.ttft_s == a.ttft_s


def test_adaptive_table_speculation_pays_at_low_load_not_at_high() -> None:
    f = extract(request_view(CHAT, chat("Return JSON", temperature=0)), CFG)
    low = _decide("adaptive", _inp(f, "structured", 0, 0, tps=3.3))
    assert low.role == "speculative" and low.reason == "predicted_faster"
    assert low.detail.startswith("predicted_faster ") and "x on speculative, " in low.detail
    assert low.detail.endswith("x alone")
    busy = _decide("adaptive", _inp(f, "structured", 48, 48, tps=1.4))  # both loaded, low acceptance
    assert busy.role == "baseline"
    idle_spec = _decide("adaptive", _inp(f, "structured", 32, 0, tps=1.2))  # turning spec on costs the baseline
    assert idle_spec.role == "baseline"


@settings(max_examples=300)
@given(features(n=1), st.floats(0.0, 0.999), st.integers(0, 32), st.integers(0, 32), st.floats(1.0, 5.0),
       st.floats(1.0, 512.0))
def test_exploration_is_bounded_by_rate_and_regret(f: object, draw: float, bl: int, sl: int, tps: float,
                                                   out: float) -> None:
    cfg = AdaptiveConfig(explore_rate=0.05, explore_max_regret=1.5, explore_min_observations=0)
    inp = _inp(f, "chat", bl, sl, tps=tps, draw=draw, output=out)
    d = decide("adaptive", inp, RULES, cfg)
    assert d is not None
    if d.reason == "explore":
        assert draw < 0.05 and inp.estimates is not None and inp.estimates.output_tokens <= 128
        assert d.ratio is not None  # the explored server is predicted at most 1.5x the cost of the other
        assert d.ratio >= 1 / 1.5 - 1e-9 if d.role == "speculative" else d.ratio <= 1.5 + 1e-9


def test_home_check_keeps_a_busy_speculative_server_from_locking_in_requests_it_serves_worse() -> None:
    """Seen on the emulated replay of the H200 run: with the speculative server busy and the baseline idle, the
    turn-on charge made the baseline look 10-50x dearer for sampled requests (1.0 token/step), so everything
    stayed on the slower server. The home check sends them back; greedy requests (3 tokens/step) stay."""
    f = extract(request_view(CHAT, chat("Write a poem", temperature=1.0, max_tokens=256)), CFG)
    sampled = _inp(f, "creative", 0, 24, tps=1.0, output=256)
    assert sampled.estimates is not None
    cfg = AdaptiveConfig(explore_rate=0.0, explore_unmeasured_rate=0.0, home_check=True)
    now_ratio = decide("adaptive", sampled, RULES, cfg)
    assert now_ratio is not None and now_ratio.ratio is not None and now_ratio.ratio > 1.05  # spec "faster now"
    assert now_ratio.role == "baseline" and now_ratio.reason == "home_baseline", now_ratio
    greedy = dataclasses.replace(sampled, estimates=dataclasses.replace(sampled.estimates, tokens_per_step=3.0))
    d = decide("adaptive", greedy, RULES, cfg)
    assert d is not None and d.role == "speculative" and d.reason == "predicted_faster", d
    # Off (the default), the cost right now decides: the busy server keeps it (right where the mix pays there).
    d = decide("adaptive", sampled, RULES, dataclasses.replace(cfg, home_check=False))
    assert d is not None and d.role == "speculative", d
