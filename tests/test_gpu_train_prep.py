"""Issue 39's preparation scripts (deploy/gpu/train): the held-out split and the task-class prompts.

No torch or tokenizers here: only the stdlib parts (build_corpus.py's split, tasks.py, the counter parsing of
measure_acceptance.py) on small synthetic documents.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

TRAIN = Path(__file__).parent.parent / "deploy" / "gpu" / "train"


def _load(name: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, TRAIN / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


corpus = _load("build_corpus")
tasks = _load("tasks")
measure = _load("measure_acceptance")


def _docs(n: int = 400) -> list[Any]:
    docs = [corpus.Doc(id=f"stdlib:m{i}.py", source="stdlib", text=f"def f{i}(x):\n    return x + {i}\n")
            for i in range(n)]
    kinds = [k for ks in tasks.CLASSES.values() for k in ks]
    for i in range(n):
        kind = kinds[i % len(kinds)]
        docs.append(corpus.task_doc(kind, {"messages": [{"role": "user", "content": f"task {i} of {kind}"}],
                                           "temperature": 0.0, "max_tokens": 128}, f"answer {i}"))
    return docs


def test_split_is_disjoint_complete_and_deterministic() -> None:
    docs = _docs()
    train, held = corpus.split_docs(docs, seed=7, fraction=0.1)
    assert {d.text for d in train}.isdisjoint({d.text for d in held})
    assert len(train) + len(held) == len(docs)
    assert 0.05 * len(docs) < len(held) < 0.15 * len(docs)
    _, held2 = corpus.split_docs(list(reversed(docs)), seed=7, fraction=0.1)
    assert {d.id for d in held2} == {d.id for d in held}  # by content, not by position
    _, held3 = corpus.split_docs(docs, seed=8, fraction=0.1)
    assert {d.id for d in held3} != {d.id for d in held}


def test_split_drops_duplicates_so_a_text_cannot_be_on_both_sides() -> None:
    doc = corpus.Doc(id="a", source="stdlib", text="same text")
    twin = corpus.Doc(id="b", source="man", text="same text")
    train, held = corpus.split_docs([doc, twin, corpus.Doc(id="c", source="man", text=" \n")], seed=1, fraction=0.5)
    assert len(train) + len(held) == 1


def test_jsonl_round_trip(tmp_path: Path) -> None:
    docs = _docs(5)
    corpus.write_jsonl(tmp_path / "d.jsonl", docs)
    assert corpus.read_jsonl(tmp_path / "d.jsonl") == docs


def test_task_doc_text_is_prompt_plus_reference_in_the_chat_template() -> None:
    d = corpus.task_doc("sql", {"messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]},
                        "SELECT 1;")
    assert d.prompt == "<|system|>S\n<|user|>U\n<|assistant|>"
    assert d.text == d.prompt + "SELECT 1;" and d.kind == "sql"
    completion = corpus.task_doc("code_gen", {"prompt": "def f():"}, "\n    return 1")
    assert completion.prompt == "def f():"


def test_troff_is_stripped() -> None:
    src = '.\\" comment\n.TH LS 1\n.SH NAME\nls \\- list \\fBdirectory\\fR contents\n.B \\-l\n'
    assert corpus.troff_to_text(src) == "LS 1\nNAME\nls - list directory contents\n-l"


def _prompt_docs() -> list[dict[str, Any]]:
    _, held = corpus.split_docs(_docs(), seed=3, fraction=0.5)
    return [{"id": d.id, "kind": d.kind, "text": d.text, "prompt": d.prompt, "reference": d.reference,
             "meta": d.meta} for d in held]


def test_prompts_cover_every_class_in_both_modes_from_heldout_only() -> None:
    held = _prompt_docs()
    prompts = tasks.build_prompts(held, per_class=3, seed=1)
    held_ids = {d["id"] for d in held}
    assert {p.doc_id for p in prompts} <= held_ids
    for cls in tasks.CLASSES:
        for mode in tasks.MODES:
            sel = [p for p in prompts if p.cls == cls and p.mode == mode]
            assert len(sel) == 3, (cls, mode)
            for p in sel:
                assert (p.temperature == 0.0) == (mode == "greedy")
                assert mode == "greedy" or 0.8 <= p.temperature <= 1.2
                kind = next(d["kind"] for d in held if d["id"] == p.doc_id)
                assert kind in tasks.CLASSES[cls] or not kind  # its own kinds, or a plain fallback document
    assert len({p.id for p in prompts}) == len(prompts)


def test_prompts_are_deterministic_and_respect_limits() -> None:
    held = _prompt_docs()
    a = tasks.build_prompts(held, per_class=2, seed=5, max_tokens_cap=64)
    assert a == tasks.build_prompts(list(reversed(held)), per_class=2, seed=5, max_tokens_cap=64)
    assert all(p.max_tokens <= 64 for p in a)
    short = tasks.build_prompts(held, per_class=2, seed=5, max_prompt_tokens=3, count_tokens=lambda s: len(s))
    assert short == []


def test_classes_without_task_documents_fall_back_to_plain_documents() -> None:
    plain = [{"id": f"stdlib:{i}", "kind": "", "text": "line one\nline two\nline three\n" * 3} for i in range(20)]
    prompts = tasks.build_prompts(plain, per_class=2, seed=1)
    assert {p.cls for p in prompts} == set(tasks.CLASSES)
    assert len({p.doc_id for p in prompts}) == 2 * len(tasks.CLASSES)  # each plain document feeds one class
    assert all(p.prompt and p.reference for p in prompts)


@pytest.mark.parametrize("fixture", ["vllm-0.26.0-draft-model-metrics.txt", "vllm-0.26.0-baseline-metrics.txt"])
def test_counters_parse_real_vllm_metrics(fixture: str) -> None:
    text = (Path(__file__).parent / "fixtures" / fixture).read_text()
    c = measure.parse_counters(text)
    if "draft" in fixture:
        assert (c["drafts"], c["draft_tokens"], c["accepted"], c["generated"]) == (13133, 52532, 31464, 44544)
        assert [c[f"pos{i}"] for i in range(4)] == [13121, 13121, 5222, 0]
        d = measure.derive(c)
        assert d["acceptance_rate"] == pytest.approx(31464 / 52532)
        assert d["mean_acceptance_length"] == pytest.approx(1 + 31464 / 13133)
        assert d["tokens_per_step"] == pytest.approx(44544 / (44544 - 31464))
        assert d["per_position_acceptance"][0] == pytest.approx(13121 / 13133, abs=1e-4)
    else:
        assert c["drafts"] == 0 and c["generated"] > 0
        assert measure.derive(c)["acceptance_rate"] is None
