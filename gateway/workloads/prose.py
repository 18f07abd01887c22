"""Prose tasks cut from real text: chat answers from the language reference and docstrings, creative
writing at high temperature, extraction from a document, and long-context questions whose short answers
copy spans of a long prompt.

Creative references are collages of real English sentences drawn from several documents that are not in
the prompt: fluent text that a drafter cannot copy from the prompt, which is the property that matters.
"""

from __future__ import annotations

import ast
import random
import re

from gateway.workloads.corpus import Corpus
from gateway.workloads.task import Task, chat_body, truncate_words

_ASSISTANT = "You are a helpful assistant."
_CREATIVE_FORMS = (
    ("a short story", "story"), ("a very short story", "story"), ("a poem in free verse", "poem"),
    ("a whimsical essay", "essay"), ("the opening paragraph of a novel", "story"), ("a letter to a friend", "essay"),
)


def _topic_body(text: str) -> tuple[str, str]:
    """(title, body) of a `pydoc_data` topic: the first line is the title, then a rule of asterisks."""
    lines = text.split("\n")
    if len(lines) > 2 and set(lines[1]) == {"*"}:
        return lines[0].strip(), "\n".join(lines[2:]).strip()
    return "", text.strip()


def _paragraphs(body: str) -> list[str]:
    return [p for p in re.split(r"\n\s*\n", body) if p.strip()]


def _reflow(para: str) -> str:
    return para.rstrip() if para.startswith("   ") else " ".join(para.split())


def _answer_from(body: str, max_words: int) -> str:
    out: list[str] = []
    words = 0
    for para in _paragraphs(body):
        text = _reflow(para)
        n = len(text.split())
        if out and words + n > max_words:
            break
        out.append(text if n <= max_words else truncate_words(text, max_words))
        words += n
    return "\n\n".join(out)


def _chat_topic(corpus: Corpus, rng: random.Random) -> tuple[str, str] | None:
    key = rng.choice(list(corpus.topics))
    title, body = _topic_body(corpus.topics[key])
    if not title:
        return None
    ask = rng.choice(["Can you explain {t}?", "How does {t} work?", "What should I know about {t}?",
                      "Give me a short explanation of {t}."])
    return ask.format(t=title[0].lower() + title[1:]), _answer_from(body, rng.randint(80, 260))


def _chat_docstring(corpus: Corpus, rng: random.Random) -> tuple[str, str]:
    fn = rng.choice(corpus.functions)
    question = rng.choice(["What does `{m}.{n}` do?", "When would I use {m}.{n}()?", "Explain {m}.{n} briefly."])
    sig = fn.source.split(":\n", 1)[0].removeprefix("def ")
    answer = f"`{fn.module}.{sig}` " + "\n\n".join(_reflow(p) for p in _paragraphs(fn.docstring))
    return question.format(m=fn.module, n=fn.name), answer


def chat(corpus: Corpus, rng: random.Random) -> Task | None:
    pair = _chat_topic(corpus, rng) if rng.random() < 0.6 else _chat_docstring(corpus, rng)
    if pair is None or not pair[1]:
        return None
    messages = [{"role": "system", "content": _ASSISTANT}]
    if rng.random() < 0.3:  # a follow-up in a conversation: the earlier exchange is in the prompt
        earlier = _chat_docstring(corpus, rng)
        messages += [{"role": "user", "content": earlier[0]}, {"role": "assistant", "content": earlier[1]}]
    messages.append({"role": "user", "content": pair[0]})
    return Task("chat", "/v1/chat/completions", chat_body(messages, pair[1], rng.choice([0.6, 0.7, 0.7, 0.8])),
                pair[1])


def zen_lines(corpus: Corpus) -> list[str]:
    """The Zen of Python, decoded from `this.py` without importing it (importing prints it)."""
    src = corpus.module_source("this") or ""
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            import codecs

            return [line for line in codecs.decode(node.value.value, "rot13").split("\n")[2:] if line]
    return []


def creative(corpus: Corpus, rng: random.Random) -> Task:
    sentences = corpus.prose_sentences
    seed_sentence = rng.choice(sentences)
    form, shape = rng.choice(_CREATIVE_FORMS)
    count = rng.randint(4, 10)
    picked = rng.sample(sentences, count)
    if shape == "poem":
        zen = zen_lines(corpus)
        lines = [piece.strip() for s in picked[: count // 2] for piece in s.split(", ") if piece.strip()]
        lines += rng.sample(zen, min(len(zen), rng.randint(2, 5)))
        rng.shuffle(lines)
        reference = "\n".join(lines)
    else:
        half = count // 2
        reference = " ".join(picked[:half]) + "\n\n" + " ".join(picked[half:])
    user = rng.choice([
        f"Write {form} inspired by this sentence: \"{seed_sentence}\"",
        f"Write {form} in which a programmer finally understands this: {seed_sentence}",
        f"Be creative: write {form} that begins with the words \"{' '.join(seed_sentence.split()[:4])}\".",
    ])
    temperature = round(rng.uniform(0.9, 1.2), 2)
    body = chat_body([{"role": "user", "content": user}], reference, temperature, top_p=0.95)
    return Task("creative", "/v1/chat/completions", body, reference)


def extraction(corpus: Corpus, rng: random.Random) -> Task | None:
    key = rng.choice(list(corpus.topics))
    title, body = _topic_body(corpus.topics[key])
    if not 1500 <= len(body) <= 11000:
        return None
    prose = [_reflow(p) for p in _paragraphs(body) if not p.startswith(" ") and "::=" not in p]
    sentences = [s for p in prose for s in re.split(r"(?<=[.!?])\s+", p) if 20 < len(s) < 400 and s[-1] in ".!?"]
    words = sorted({w for w in re.findall(r"\b[a-z]{6,}\b", body.lower())})
    rng.shuffle(words)
    for word in words:
        hits = [s for s in sentences if re.search(rf"\b{word}\b", s, re.IGNORECASE)]
        if 2 <= len(hits) <= 6:
            reference = "\n".join(f"- {s}" for s in hits)
            user = (f"From the text below, extract every sentence that mentions \"{word}\", word for word, as a "
                    f"bulleted list.\n\n{title}\n\n{body}")
            return Task("extraction", "/v1/chat/completions",
                        chat_body([{"role": "user", "content": user}], reference, 0.0), reference)
    return None


def _window(text: str, rng: random.Random, min_chars: int, max_chars: int) -> str:
    size = rng.randint(min_chars, max_chars)
    if len(text) <= size:
        return text
    start = rng.randrange(0, len(text) - size)
    start = text.rfind("\n\n", 0, start) + 2 if text.rfind("\n\n", 0, start) >= 0 else 0
    end = text.find("\n\n", start + size)
    return text[start : end if end >= 0 else len(text)]


def _long_question(doc: str, rng: random.Random) -> tuple[str, str] | None:
    if "\ndef " in doc and rng.random() < 0.5:
        tree_src = doc
        names = re.findall(r"^\s*(?:def|class) (\w+)", tree_src, re.M)
        if rng.random() < 0.5 and len(names) >= 3:
            return ("List the names of all functions and classes defined in the code above, in order, one per line.",
                    "\n".join(names))
        docs = re.findall(r"^\s*def (\w+)\(.*?\):\n\s*(\"\"\"[\s\S]*?\"\"\")", tree_src, re.M)
        docs = [(n, d) for n, d in docs if 60 < len(d) < 900]
        if docs:
            name, docstring = rng.choice(docs)
            return f"Quote the docstring of `{name}` exactly as it appears above.", docstring
    paras = [p.strip() for p in re.split(r"\n\s*\n", doc) if 200 < len(p.strip()) < 1000 and not p.startswith(" ")]
    if not paras:
        return None
    para = rng.choice(paras)
    opening = " ".join(para.split()[:7])
    return f"Quote, word for word, the paragraph of the document above that begins with \"{opening}\".", para


def long_context(corpus: Corpus, rng: random.Random) -> Task | None:
    title, text = rng.choice(corpus.long_documents())
    doc = _window(text, rng, 12500, 30000)
    qa = _long_question(doc, rng)
    if qa is None or len(doc) < 12000:
        return None
    question, reference = qa
    user = f"Here is {title}:\n\n<document>\n{doc}\n</document>\n\n{question} Answer using only the document."
    body = chat_body([{"role": "user", "content": user}], reference, rng.choice([0.0, 0.0, 0.3]))
    return Task("long_context", "/v1/chat/completions", body, reference)
