"""Acceptance as the decision path reads it: the ratio of decode tokens to decode steps over a class's responses
(what the cost model's `(output - 1) / tokens_per_step` needs), refined per request by whether the prompt carries a
copy source (`classify.Features.copy_source`). Issue 38: on all-structured Azure code the n-gram fleet delivered
1.65 tokens a decode step, the learner read 1.40 and the per-request cells ~1.2 (a mean over responses, each
counted once, where short answers accept little and long ones most), so specgate under-used its speculative half."""

from __future__ import annotations

import random

import pytest

from gateway.core.classify import features
from gateway.core.learner import Learner, Observation
from gateway.core.per_request import PerRequest
from gateway.core.protocol import request_view
from gateway.settings import Settings

# (completion tokens, content chunks) of a structured answer: short ones accept little, long ones much (the shape
# of the all-structured Azure window on the n-gram server; results/fleet-2026-12-05-e)
SHAPES = ((9, 8, 0.60), (30, 22, 0.25), (200, 100, 0.15))


def _delivered() -> float:
    tokens = sum((n - 1) * share for n, _, share in SHAPES)
    steps = sum((s - 1) * share for _, s, share in SHAPES)
    return tokens / steps


def _speculative(lrn: Learner, tokens: int, steps: int, copy_source: bool = False, cls: str = "structured",
                 prompt: int = 900) -> None:
    lrn.observe(Observation(role="speculative", task_class=cls, bucket="greedy", prompt_tokens=prompt,
                            completion_tokens=tokens, steps=steps, ttft_s=0.05, e2e_s=0.05 + 0.01 * steps,
                            load_self=1.0, copy_kind="copy" if copy_source else "new"))


def _read(lrn: Learner, cls: str = "structured", prompt: int = 900, copy_source: bool = False) -> float:
    """Tokens per step as the policy prices one more request of this class (router `estimates`)."""
    return lrn.per_request.for_request(lrn.tokens_per_step_posterior(cls, "greedy"), cls, "greedy", 256, True,
                                       prompt, True, None, 0.0, "copy" if copy_source else "new")[1]


def test_the_decision_reads_the_tokens_per_decode_step_the_server_delivered() -> None:
    lrn = Learner(Settings().learner_config())
    rng = random.Random(7)
    for _ in range(400):
        n, s, _ = rng.choices(SHAPES, weights=[share for *_, share in SHAPES])[0]
        _speculative(lrn, n, s)
    delivered = _delivered()  # 1.72
    assert lrn.tokens_per_step("structured", "greedy") == pytest.approx(delivered, rel=0.06)
    # each answer read at its length: the decode steps the reads imply add up to the steps the server took
    steps = sum((n - 1) / _read_at(lrn, n) * share for n, _, share in SHAPES)
    assert steps == pytest.approx(sum((s - 1) * share for _, s, share in SHAPES), rel=0.06)


def _read_at(lrn: Learner, output_tokens: float) -> float:
    """Tokens per step as the policy prices a request predicted at `output_tokens`."""
    return lrn.per_request.tokens_per_step(lrn.tokens_per_step_posterior("structured", "greedy"), "structured",
                                           "greedy", 900, None, output_tokens=output_tokens)[0]


def test_the_first_chunk_is_the_prefills_one_token_not_a_decode_step() -> None:
    """A 9-token answer in 5 chunks: 1 token with the prefill, 8 in 4 decode steps (2 a step, not 9 / 5 = 1.8)."""
    lrn = Learner(Settings().learner_config())
    for _ in range(200):
        _speculative(lrn, 9, 5)
    assert lrn.tokens_per_step("structured", "greedy") == pytest.approx(2.0, rel=0.02)
    assert _read(lrn) == pytest.approx(2.0, rel=0.02)


def test_edits_and_new_code_of_one_class_are_told_apart_and_a_new_cell_starts_from_its_neighbours() -> None:
    lrn = Learner(Settings().learner_config())
    for _ in range(120):
        _speculative(lrn, 91, 41, copy_source=True, cls="code")  # an edit copies its prompt: 2.25 a step
        _speculative(lrn, 61, 51, copy_source=False, cls="code")  # new code: 1.2
    assert _read(lrn, "code", copy_source=True) > 2.0
    assert _read(lrn, "code", copy_source=False) < 1.4
    # an edit with a prompt length never seen starts from the edits' cell, not from the class's mean
    assert _read(lrn, "code", prompt=7000, copy_source=True) > 1.9


def test_a_new_copy_cell_of_a_measured_class_starts_at_the_class() -> None:
    per = PerRequest(256, 0.98, 5.0)
    for _ in range(50):
        per.observe_acceptance("code", "greedy", 300, 61, 51, 1.2, None, 0.0, "new")
    assert per.tokens_per_step((1.2, 0.1), "code", "greedy", 300, None, 0.0, "copy")[0] == pytest.approx(1.2, rel=0.05)


@pytest.mark.parametrize(("prompt", "copy"), [
    # a real edit request, unfenced: the answer repeats the pasted file
    ("Here is my file:\n\nimport os\n\ndef load(path):\n    with open(path) as f:\n        return f.read()\n\n"
     "Change load so it returns bytes.", True),
    ("Can you rename `n` to `count` in this function?\n\ndef f(n):\n    return n + 1", True),
    ("```python\n" + "def area(r):\n    return 3.14159 * r * r\n" * 5 + "```\nAdd type hints.", True),
    ("Summarise the following:\n```\n" + "The quarterly numbers rose by four percent. " * 8, True),  # cut off
    ("Write a Python function `islink(path)` that tests whether a path is a symbolic link.", False),
    ("What does `x = 1` mean?\n```python\nx = 1\n```", False),  # a short snippet: little to copy
    ("Tell me about the history of Rome.", False),
])
def test_the_copy_source_is_what_the_request_shows(prompt: str, copy: bool) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
    f = features(request_view("/v1/chat/completions", body), Settings().classifier_config())
    assert f.copy_source is copy


def test_a_cell_holds_what_its_requests_delivered_not_a_ratio_to_a_class_estimate_that_moved() -> None:
    """New code (1.15 tokens a decode step, short answers) first, then edits (3.33, long) beside it: the class estimate
    climbs from ~1.15 to ~2 while the cells fill. Cells that learned each response's ratio to the class estimate at the
    time read new code at 1.64 and edits at 4.0 once it had climbed (azure-code-b 1 + 1 on the n-gram fleet,
    results/fleet-2026-12-05-f: new code read 1.57 where it delivered 1.14, edits 3.99 where they delivered 3.29); each
    cell must read what its own requests delivered."""
    lrn = Learner(Settings().learner_config())
    for _ in range(20):
        _speculative(lrn, 24, 21, copy_source=False, cls="code")  # 23 tokens in 20 decode steps: 1.15
    for _ in range(20):
        _speculative(lrn, 91, 28, copy_source=True, cls="code")  # 90 in 27: 3.33
        _speculative(lrn, 24, 21, copy_source=False, cls="code")
    assert lrn.tokens_per_step("code", "greedy") > 1.9  # the class moved
    assert _read(lrn, "code", copy_source=False) == pytest.approx(1.15, rel=0.1)
    assert _read(lrn, "code", copy_source=True) == pytest.approx(3.33, rel=0.1)


def _asked(lrn: Learner, max_tokens: int, tokens: int, steps: int) -> None:
    lrn.observe(Observation(role="speculative", task_class="structured", bucket="greedy", prompt_tokens=900,
                            completion_tokens=tokens, steps=steps, ttft_s=0.05, e2e_s=0.05 + 0.01 * steps,
                            load_self=1.0, max_tokens=max_tokens, structured=True))


def _read_asked(lrn: Learner, max_tokens: int) -> float:
    return lrn.per_request.for_request(lrn.tokens_per_step_posterior("structured", "greedy"), "structured", "greedy",
                                       max_tokens, True, 900, True, None, 0.0, "new")[1]


def test_a_long_answer_is_read_at_what_long_answers_delivered_not_at_the_class_mean() -> None:
    """All-structured Azure code on the n-gram fleet (results/fleet-2026-12-05-g): answers asked for in 64 tokens ran
    at ~1.05 tokens a decode step, those asked for in 1,024 at ~2.3, the class's ratio of sums sat at the n-gram
    server's break-even (~1.4), and every request was priced there: the few long answers (10 s on the baseline, 6 s
    speculated) went to the baseline about half the time. A request that says it is long (`max_tokens`, through its
    predicted length) must read what long answers delivered, a short one what short ones did; a length never seen
    (2,048) reads at least the longest seen below it."""
    lrn = Learner(Settings().learner_config())
    rng = random.Random(3)
    for _ in range(300):
        shape = rng.choices(((64, 20, 19), (256, 180, 110), (1024, 700, 300)), weights=(0.8, 0.15, 0.05))[0]
        _asked(lrn, *shape)
    short, mid, long, longer = (_read_asked(lrn, m) for m in (64, 256, 1024, 2048))
    assert short < 1.15  # 19 tokens in 18 decode steps: 1.06 (read at the class, every request read ~1.5)
    assert 1.4 < mid < 1.8  # 179 in 109: 1.64
    assert long > 2.1  # 699 in 299: 2.34
    assert longer > 2.1


def test_a_first_long_answer_reads_the_growth_over_the_short_ones() -> None:
    """The 1,024- and 2,048-token answers of all-structured 1 + 1 came 15-21 s in, each the first of its length, before
    any long answer was speculated: read at the longest length seen (64 tokens, ~1.3 a step) they stayed coin tosses.
    The growth over the short answers (+~0.1 a step per doubling) says more."""
    per = PerRequest(256, 0.98, 5.0)
    for _ in range(40):
        for tokens, steps in ((9, 9), (17, 16), (33, 28), (65, 50)):  # 1.0, 1.07, 1.19, 1.31 tokens a decode step
            per.observe_acceptance("structured", "greedy", 900, tokens, steps, 1.2, None)
    read = [per.tokens_per_step((1.2, 0.1), "structured", "greedy", 900, None, output_tokens=n)[0]
            for n in (10, 64, 1024)]
    assert read[0] < 1.08 and 1.25 < read[1] < 1.4
    assert read[2] > 1.55  # the line: ~1.7 (the longest seen: 1.31)


def test_two_answers_an_octave_apart_do_not_extrapolate_a_long_one() -> None:
    """azure-conv-a on the 2 + 2 fleet (results/fleet-peers-2026-12-06-j): conversations classed "code", one 64-token
    answer at 1.1 tokens a decode step and one 128-token answer at 1.64, and the line through those two cells read
    the next 400-token answer at 2.9 (2x the cell): it went to a speculative server and ran at 1.04, 1.6 s over its
    prediction, twice in one run. Two responses say little about a slope; forty say much (the test above)."""
    per = PerRequest(256, 0.995, 5.0)
    per.observe_acceptance("code", "greedy", 1200, 65, 59, 1.2, None)  # 64 decode tokens in 58 decode steps: 1.10
    per.observe_acceptance("code", "greedy", 1200, 129, 79, 1.2, None)  # 128 in 78: 1.64
    blind = per.tokens_per_step((1.2, 0.1), "code", "greedy", 1200, None)[0]
    long = per.tokens_per_step((1.2, 0.1), "code", "greedy", 1200, None, output_tokens=400)[0]
    assert long < 1.15 * blind  # the two-point line read 2x


def test_a_cells_first_long_answer_is_bounded_by_what_its_class_long_answers_delivered() -> None:
    """azure-conv-a on the 2 + 2 fleet (results/fleet-peers-2026-12-06-j, section 2): 4-6 answers of > 300 tokens a run
    went to a speculative server read at their cell's short answers (a "code" cell whose short answers quoted at 1.6
    read its first 400-token answer at 1.5-1.6; it ran at 1.04). The class had delivered ~1.05 on its long answers
    elsewhere (another copy kind); until the cell has an answer that long, that bounds it. Before: read 1.6."""
    per = PerRequest(256, 0.995, 5.0, by_kind=True)
    for _ in range(4):  # the class's long answers, of another copy kind: 1.05 tokens a decode step
        per.observe_acceptance("code", "low", 1200, 421, 400, 1.2, None, 0.7, "new")
    for _ in range(6):  # this cell's short answers quote: 1.6
        per.observe_acceptance("code", "low", 1200, 81, 50, 1.2, None, 0.7, "ref")
    short = per.tokens_per_step((1.2, 0.1), "code", "low", 1200, None, 0.7, "ref", output_tokens=80)[0]
    long = per.tokens_per_step((1.2, 0.1), "code", "low", 1200, None, 0.7, "ref", output_tokens=400)
    assert short > 1.45  # its short answers keep their reading
    assert long[0] < 1.1 and long[2].endswith("class_length")
    per.observe_acceptance("code", "low", 1200, 641, 400, 1.2, None, 0.7, "ref")  # one long "ref" answer at 1.6
    assert per.tokens_per_step((1.2, 0.1), "code", "low", 1200, None, 0.7, "ref", output_tokens=400)[0] > 1.3


def test_no_long_answer_in_the_class_bounds_nothing() -> None:
    per = PerRequest(256, 0.995, 5.0, by_kind=True)
    for _ in range(6):
        per.observe_acceptance("code", "low", 1200, 81, 50, 1.2, None, 0.7, "ref")
    long = per.tokens_per_step((1.2, 0.1), "code", "low", 1200, None, 0.7, "ref", output_tokens=400)
    assert long[0] > 1.45 and "class_length" not in long[2]
