"""Per-request acceptance by what the request's ask does with the text it pastes (issue 38).

An n-gram drafter proposes what it finds in the prompt, so an edit of pasted code (the answer returns it, changed)
ran at ~2.5 tokens a decode step on the emulated n-gram fleet and new code at ~1.1-1.2, both "code", against a
break-even of ~1.4. Keyed by class first, then temperature, then whether the prompt pastes a block, the cells read a
new-code request at a temperature whose cell was not filled yet at the class's mean (edits included): on the
azure-code-a window new code read 1.40 tokens a step on average where it delivered 1.19, and went to the n-gram
server. Keyed by the ask's copy kind first (edit / ref / new), over the classes of the bucket, then class, temperature
and prompt length, a new cell starts from requests that copy alike (results/fleet-accept-2026-12-05-h)."""

from __future__ import annotations

import re

import openai
import pytest

from gateway.bench.kit.inproc import fast_settings, start_gateway
from gateway.core.acceptance_cells import AcceptanceCells
from gateway.core.classify import ClassifierConfig, copy_kind, features
from gateway.core.instruction import instruction_text
from gateway.core.protocol import request_view
from gateway.emulator import EmulatedFleet, parse_layout

CODE = "def overlap(a, b):\n" + "".join(f"    # remove step {i}\n    x{i} = a[{i}] - b[{i}]\n" for i in range(12))
FENCED = f"```python\n{CODE}```"
CFG = ClassifierConfig(0.8, 3000, 4.0, 256, copy_kinds=True)


def _kind(content: str, cfg: ClassifierConfig = CFG) -> str:
    body = {"model": "m", "messages": [{"role": "system", "content": "You are a coding assistant."},
                                       {"role": "user", "content": content}], "max_tokens": 64}
    return features(request_view("/v1/chat/completions", body), cfg).copy_kind


def test_the_ask_is_the_text_around_the_pasted_blocks_not_their_content() -> None:
    assert instruction_text(f"Refactor this:\n\n{FENCED}\n\nKeep the names.") == "Refactor this:\nKeep the names."
    # an inline fence in the ask is the ask's own text, not a block
    ask = instruction_text(f"Here it is:\n\n{FENCED}\n\nRename it. Return it in a ```python block.")
    assert ask.endswith("Rename it. Return it in a ```python block.")
    # a prompt cut off inside its block: what follows the open fence is pasted ("# remove" in the code)
    assert instruction_text(f"Here is a function:\n\n```python\n{CODE}") == "Here is a function:"
    assert instruction_text("no blocks: change the second line") == "no blocks: change the second line"
    # thousands of blocks (a hostile or generated prompt): the same rule, read from the ends of the text
    many = "Fix these:\n\n" + "```a```" * 3000 + "\n\nRename x."
    assert instruction_text(many) == "Fix these:\nRename x."
    # only the last paragraph before the first block: a document above it is not the ask
    assert instruction_text(f"Context:\n{CODE}\n\nHere is a function:\n\n{FENCED}\nWhat does it do?") == (
        "Here is a function:\nWhat does it do?")


def test_an_edit_and_a_question_about_the_same_block_are_different_kinds() -> None:
    assert _kind(f"{FENCED}\n\nRename `overlap` to `_overlap`. Return the complete updated function.") == "edit"
    assert _kind(f"{FENCED}\n\nDescribe the signature of this function and what it returns.") == "ref"
    assert _kind(f"Here is a function:\n\n```python\n{CODE}") == "ref"  # its comments say "remove": not the ask
    assert _kind("Write a Python function that computes the overlap of two ranges.") == "new"
    # kinds off: as before, whether the prompt pastes a block
    off = ClassifierConfig(0.8, 3000, 4.0, 256)
    assert _kind(f"{FENCED}\n\nRename `overlap`.", off) == "copy" and _kind("Write a function.", off) == "new"
    assert copy_kind(False, "rename it") == "new"


def _fill(cells: AcceptanceCells, cls: str, kind: str, tps: float, temperature: float, n: int,
          mean: float) -> None:
    for _ in range(n):  # 20-token answers: 19 decode tokens
        cells.observe(cls, "low", 900, tps, mean, 19 / tps, temperature=temperature, copy_kind=kind, tokens=20)


@pytest.mark.parametrize("by_kind", [False, True])
def test_new_code_at_an_unseen_temperature_reads_new_code_not_the_class_mean_of_its_edits(by_kind: bool) -> None:
    """The regression: with the class first, a new-code request at temperature 0.3 (no cell yet) read the class's
    mean, which its edits lift to ~1.8, above the break-even; by copy kind first it reads the new requests' 1.15."""
    cells, mean = AcceptanceCells(0.98, by_kind), 1.8  # the (class, bucket) estimate: edits and new code together
    new, edit = ("new", "edit") if by_kind else ("new", "copy")  # kinds off: whether it pastes a block
    _fill(cells, "code", edit, 2.5, 0.2, 30, mean)
    _fill(cells, "code", new, 1.15, 0.2, 30, mean)
    read = cells.explained(mean, "code", "low", 900, None, 0.3, new)[0]
    if by_kind:
        assert read == pytest.approx(1.15, abs=0.05)
        assert cells.explained(mean, "code", "low", 900, None, 0.3, edit)[0] == pytest.approx(2.5, abs=0.1)
    else:
        assert read == pytest.approx(mean, abs=0.05)  # what main did


def test_a_class_first_edit_starts_from_the_edits_of_the_other_classes() -> None:
    """Hierarchical: a new (class, kind) cell is shrunk toward its kind over all classes of the bucket, not toward its
    class's mean (a structured request that edits pasted code accepts like code edits, not like JSON answers)."""
    cells = AcceptanceCells(0.98, by_kind=True)
    _fill(cells, "code", "edit", 2.5, 0.2, 30, 1.8)
    _fill(cells, "structured", "ref", 1.1, 0.2, 30, 1.1)
    first, source = cells.explained(1.1, "structured", "low", 900, None, 0.2, "edit")
    assert 2.0 < first <= 2.5 and source == "kind"  # the edits' 2.5, shrunk a little toward the class's 1.1
    _, deep = cells.explained(1.8, "code", "low", 900, None, 0.2, "edit", output_tokens=20.0)
    assert deep.startswith("kind>class_kind>temperature>prompt")


@pytest.mark.asyncio
async def test_the_decision_says_the_tokens_per_step_it_priced_and_where_they_came_from() -> None:
    """Through the gateway on an emulated 1 + 1 fleet with the real client: the reason header of a cost decision
    names the tokens per step and the acceptance cells behind it."""
    ask = f"{FENCED}\n\nRename `overlap` to `_overlap` everywhere. Return the complete updated function."
    async with EmulatedFleet(parse_layout("baseline,speculative"), time_scale=0.05) as fleet:
        gw = await start_gateway(fast_settings(backends=fleet.backends_setting().split(","), random_seed=3))
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="unused", max_retries=0)
        try:
            reasons = []
            for _ in range(8):
                raw = await client.chat.completions.with_raw_response.create(
                    model="specgate-emu", messages=[{"role": "user", "content": ask}], max_tokens=24, temperature=0)
                reasons.append(raw.headers["x-specgate-reason"])
            priced = [r for r in reasons if "tokens/step" in r]
            assert priced, reasons
            assert all(re.search(r"at \d+\.\d\d tokens/step \((class|kind)[a-z_>]*\)", r) for r in priced), priced
        finally:
            await client.close()
            await gw.runner.cleanup()
