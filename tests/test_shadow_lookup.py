"""Shadow prompt lookup (pure): the replay of vLLM's n-gram proposer on a response's text, its calibration, and the
learner taking its reads as acceptance evidence."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from gateway.core.learner import Learner, Observation
from gateway.core.shadow_calibration import ShadowCalibration
from gateway.core.shadow_lookup import LookupConfig, gain_ratio, replay, replay_text, tokenize
from gateway.settings import Settings

K4 = LookupConfig(k=4, nmin=2, nmax=4)


def test_a_copy_of_the_prompt_is_drafted_once_two_tokens_match() -> None:
    """prompt A B C D E, output A B C D E. Step 1 (prefill): A. Step 2: suffix "E A" is new (min 2): no draft, B.
    Step 3: "A B" was seen at the start: drafts C D E (the text has 3 left), all accepted: 5 tokens in 3 steps."""
    read = replay(list("ABCDE"), list("ABCDE"), K4)
    assert (read.tokens, read.steps, read.drafted_steps) == (5, 3, 1)
    one = replay(list("ABCDE"), list("ABCDE"), LookupConfig(k=4, nmin=1, nmax=4))  # "A" matches at step 2
    assert (one.tokens, one.steps) == (5, 2)


def test_the_earliest_occurrence_is_drafted_from_as_vllm_does() -> None:
    """prompt X Y P X Y R, output X Y P Q: at step 3 the suffix "X Y" occurred twice; vLLM drafts what followed the
    first (P ..., one accepted), not the most recent (R ..., none): 4 tokens in 3 steps, not 4."""
    read = replay(list("XYPXYR"), list("XYPQ"), K4)
    assert (read.tokens, read.steps) == (4, 3)


def test_the_longest_suffix_wins_over_a_shorter_earlier_one() -> None:
    """After the prefill's C the context ends "Q A B C": "A B C" occurred once, followed by D; "B C" occurred first
    at the start, followed by Z. The longest match drafts D (accepted): 3 tokens in 2 steps (Z would take 3)."""
    read = replay(list("BCZABCDQAB"), list("CDE"), LookupConfig(k=1, nmin=2, nmax=4))
    assert (read.tokens, read.steps) == (3, 2)


def test_nothing_to_copy_is_one_token_a_step() -> None:
    read = replay(list("abcdef"), list("uvwxyz"), K4)
    assert read.tokens_per_step == 1.0 and read.drafted_steps == 0


def test_work_is_bounded_by_the_caps() -> None:
    cfg = LookupConfig(k=4, nmin=2, nmax=4, max_prompt_tokens=8, max_output_tokens=10)
    read = replay(["p"] * 10_000, ["o"] * 10_000, cfg)
    assert read.tokens == 10


def test_a_long_document_is_searched_from_its_start_as_vllm_searches_the_whole_context() -> None:
    """The defect: only the prompt's last 4096 tokens were searched, so a long-context answer quoting the document's
    opening read ~1 token a step where the n-gram server (vLLM's whole-context lookup) copies it 4 tokens at a time
    (the emulated family's long-context answers: 3.67 against the server's 4.28). Now the default reaches 16384."""
    quote = " ".join(f"w{i}" for i in range(200))
    document = quote + " " + " ".join(f"f{i}" for i in range(3000)) + "\nQuestion: what does it open with?"
    assert 4096 < len(tokenize(document)) < 16384
    assert replay_text(document, quote, K4).tokens_per_step > 3.5
    assert replay_text(document, quote, LookupConfig(max_prompt_tokens=4096)).tokens_per_step < 1.5


def test_text_replay_uses_word_tokens() -> None:
    assert tokenize("Hello, world  42x") == ["Hello", ",", " world", " ", " 42", "x"]
    prompt = 'Extract {"name": "Ada Lovelace", "born": 1815} as JSON.'
    read = replay_text(prompt, '{"name": "Ada Lovelace", "born": 1815}', K4)
    assert read.tokens_per_step > 2.0  # a copy of the prompt's JSON


@given(st.text(alphabet="ab c,\n", max_size=60), st.text(alphabet="ab c,\n", max_size=60))
def test_every_character_is_in_one_token(a: str, b: str) -> None:
    assert "".join(tokenize(a + b)) == a + b


@given(st.lists(st.sampled_from("abcd"), max_size=40), st.lists(st.sampled_from("abcd"), min_size=1, max_size=60),
       st.integers(1, 6), st.integers(1, 3), st.integers(0, 2))
def test_tokens_per_step_is_between_one_and_k_plus_one(prompt: list[str], out: list[str], k: int, nmin: int,
                                                       extra: int) -> None:
    cfg = LookupConfig(k=k, nmin=nmin, nmax=nmin + extra)
    read = replay(prompt, out, cfg)
    assert read.tokens == len(out)
    assert 1.0 <= read.tokens_per_step <= k + 1
    assert read.steps >= math.ceil((len(out) - 1) / (k + 1)) + 1  # the prefill's token, then at most k + 1 a step
    assert read.drafted_steps <= read.steps - 1


def test_calibration_starts_at_the_default_and_learns_the_measured_share() -> None:
    cal = ShadowCalibration(default_ratio=0.5, prior_weight=3.0, forgetting=0.98)
    assert cal.ratio("high") == 0.5
    assert cal.calibrated("high", 3.0) == 2.0
    for _ in range(200):  # the server accepts a quarter of the shadow's gain
        cal.observe("high", measured_tps=1.5, shadow_tps=3.0, steps=32)
    assert 0.25 < cal.ratio("high") < 0.30  # shrunk toward 0.5 by 3 of ~50 responses' weight
    assert cal.ratio("greedy") == 0.5  # per bucket
    two = ShadowCalibration(default_ratio=1.0, prior_weight=3.0, forgetting=0.98, default_ratio_sampled=0.75)
    assert (two.ratio("greedy"), two.ratio("low"), two.ratio("high")) == (1.0, 0.75, 0.75)
    assert cal.calibrated("high", 0.9) == 1.0  # never below one token a step
    assert math.isnan(gain_ratio(1.5, 1.0))


def test_calibration_ignores_pairs_with_no_shadow_gain() -> None:
    cal = ShadowCalibration(default_ratio=0.5, prior_weight=3.0, forgetting=0.98)
    for _ in range(20):
        cal.observe("greedy", measured_tps=1.3, shadow_tps=1.0, steps=32)
    assert cal.ratio("greedy") == 0.5


def _learner() -> Learner:
    return Learner(Settings().learner_config())


def test_shadow_reads_move_an_unserved_class_off_the_prior_and_narrow_it() -> None:
    lrn = _learner()
    mean0, sd0 = lrn.tokens_per_step_posterior("structured", "greedy")
    for _ in range(30):
        lrn.observe_shadow("structured", "greedy", 400, 3.0, 40, scale=0.5)
    mean, sd = lrn.tokens_per_step_posterior("structured", "greedy")
    assert mean0 == 1.2 and mean > 2.7 and sd < sd0 / 3
    assert lrn.speculative_observations("structured", "greedy") == 30
    assert lrn.tokens_per_step_posterior("creative", "high")[0] < 1.3  # another bucket: untouched


def test_a_shadow_read_weighs_less_than_a_served_response() -> None:
    served, shadowed = _learner(), _learner()
    served.observe(Observation(role="speculative", task_class="code", bucket="greedy", prompt_tokens=400,
                               completion_tokens=120, steps=40, ttft_s=0.05, e2e_s=0.5, load_self=1.0))
    shadowed.observe_shadow("code", "greedy", 400, 3.0, 40, scale=0.5)
    assert served.tokens_per_step("code", "greedy") > shadowed.tokens_per_step("code", "greedy") > 1.2


def _naive(prompt: list[str], out: list[str], k: int, nmin: int, nmax: int) -> int:
    """vLLM's rule searched the slow way: steps for `out` (the longest suffix, its earliest earlier occurrence)."""
    ctx, pos, steps = [*prompt, out[0]], 1, 1
    while pos < len(out):
        draft: list[str] = []
        for n in range(nmax, nmin - 1, -1):
            if len(ctx) < n:
                continue
            ends = [e for e in range(n, len(ctx)) if ctx[e - n:e] == ctx[-n:]]
            if ends:
                draft = ctx[ends[0]:ends[0] + min(k, len(out) - pos)]
                break
        accepted = 0
        while accepted < len(draft) and draft[accepted] == out[pos + accepted]:
            accepted += 1
        emitted = min(accepted + 1, len(out) - pos)
        ctx += out[pos:pos + emitted]
        pos += emitted
        steps += 1
    return steps


@given(st.lists(st.sampled_from("abcde"), max_size=150), st.lists(st.sampled_from("abcde"), min_size=1, max_size=120),
       st.integers(1, 5), st.integers(1, 3), st.integers(0, 2))
def test_the_indexed_replay_equals_the_rule_searched_naively(prompt: list[str], out: list[str], k: int, nmin: int,
                                                             extra: int) -> None:
    """The incremental index (and its bulk build for long prompts) drafts exactly what a plain search would."""
    read = replay(prompt, out, LookupConfig(k=k, nmin=nmin, nmax=nmin + extra))
    assert read.steps == _naive(prompt, out, k, nmin, nmin + extra)
