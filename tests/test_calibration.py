"""The per-request acceptance estimate, corrected by what it delivered where it was acted on (`core.calibration`).

Issue 38, azure-conv-a on the 2 + 2 fleet (results/fleet-peers-2026-12-06-j): two short answers of conversations
classed "code" that quoted their prompt ran at 2.2-2.5 tokens a step, and the 400-token answers of the same cells
were then read at 2.2-2.3 and sent to the speculative servers, where they ran at 1.05-1.2 (1.3 s each over their
prediction): the requests the speculative servers got took 1.19x the decode steps predicted."""

from __future__ import annotations

import pytest

from gateway.core.calibration import MAX_FACTOR, Calibration
from gateway.core.learner import Learner, Observation
from gateway.settings import Settings


def test_no_evidence_no_correction() -> None:
    cal = Calibration(0.995)
    assert cal.factor("code") == 1.0
    assert cal.calibrated("code", 2.3, 5.0) == 2.3


@pytest.mark.parametrize(("delivered", "expected"), [(1.1, 2.0 / 1.1), (2.0, 1.0), (4.0, 0.5)])
def test_the_factor_is_the_steps_taken_over_the_steps_predicted(delivered: float, expected: float) -> None:
    cal = Calibration(1.0)
    for _ in range(400):  # answers of 400 decode tokens predicted at 2.0 tokens a step
        cal.observe("code", 400, 400 / delivered, 2.0)
    assert cal.factor("code") == pytest.approx(expected, rel=0.02)
    assert cal.calibrated("code", 2.0, 5.0) == pytest.approx(max(delivered, 1.0), rel=0.02)


def test_long_answers_weigh_by_their_steps_and_the_correction_is_bounded() -> None:
    cal = Calibration(1.0)
    for _ in range(50):
        cal.observe("code", 8, 4, 2.0)  # short answers as predicted
        cal.observe("code", 400, 380, 2.0)  # long ones at 1.05: their steps dominate the ratio
    assert cal.factor("code") > 1.7
    for _ in range(400):
        cal.observe("chat", 400, 400, 4.5)  # 4.5x off: bounded
    assert cal.factor("chat") == MAX_FACTOR
    assert cal.calibrated("chat", 1.2, 5.0) == 1.0  # never below one token a step


def test_a_new_class_starts_from_all_classes() -> None:
    cal = Calibration(1.0)
    for _ in range(100):
        cal.observe("code", 400, 300, 2.0)  # 1.5x the predicted steps
    assert 1.0 < cal.factor("long_context") < cal.factor("code")
    assert cal.factor("long_context") == pytest.approx(cal.factor("code"), rel=0.1)


def _speculative(lrn: Learner, tokens: int, steps: int, predicted: float | None) -> None:
    lrn.observe(Observation(role="speculative", task_class="code", bucket="greedy", prompt_tokens=1200,
                            completion_tokens=tokens, steps=steps, ttft_s=0.05, e2e_s=0.05 + 0.0066 * steps,
                            load_self=1.0, copy_kind="ref", predicted_tokens_per_step=predicted))


def _read(lrn: Learner, output: int) -> tuple[float, float]:
    """(what the policy prices, the raw estimate) of a request answering `output` tokens (max_tokens set to it)."""
    got = lrn.per_request.for_request(lrn.tokens_per_step_posterior("code", "greedy"), "code", "greedy", output,
                                      True, 1200, False, None, 0.0, "ref")
    return got[1], got[4]


def test_an_over_read_cell_is_corrected_by_what_its_routed_requests_delivered() -> None:
    lrn = Learner(Settings().learner_config())
    for _ in range(2):  # two short answers that quoted their prompt
        _speculative(lrn, 90, 37, None)
    priced, raw = _read(lrn, 400)
    assert priced == raw > 1.8  # the long answer read as copying too (the defect's reading)
    for _ in range(6):  # routed on that reading, long answers deliver 1.05-1.2 tokens a step
        priced, raw = _read(lrn, 400)
        _speculative(lrn, 400, 360, raw)
    priced, raw = _read(lrn, 400)
    assert priced < 0.8 * raw
    assert priced < 1.5
