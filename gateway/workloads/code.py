"""Code tasks on real standard-library functions.

- `code_edit`: the prompt holds a function and asks for a small change; the reference is the whole function
  with that change applied (what models return: the code, mostly copied from the prompt).
- `code_gen`: write a function from its signature and docstring summary (chat), or complete a function body
  after its `def` line and docstring (`/v1/completions`); the reference is the real implementation.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from gateway.workloads.corpus import Corpus, FunctionSource
from gateway.workloads.task import Task, chat_body, fenced, max_tokens_for

# Descriptive names that replace short or cryptic parameter names (a common review request).
_BETTER_NAMES = {
    "s": "text", "a": "first", "b": "second", "n": "count", "x": "value", "c": "char", "i": "index", "k": "key",
    "v": "val", "d": "mapping", "f": "func", "fp": "file_obj", "p": "path", "m": "match", "l": "items",
    "lo": "low", "hi": "high", "seq": "sequence", "obj": "target", "data": "payload", "name": "label",
    "text": "source_text", "key": "lookup_key", "value": "new_value", "path": "file_path", "args": "arguments",
}
Edit = tuple[str, str]  # (instruction, edited source)


def _word_sub(old: str, new: str, text: str) -> str:
    return re.sub(rf"(?<![\w.]){re.escape(old)}\b", new, text)


def _body_start(fn: FunctionSource) -> int:
    """Line index after the signature and docstring."""
    lines = fn.source.split("\n")
    quote_lines = [i for i, line in enumerate(lines) if '"""' in line or "'''" in line]
    if not quote_lines:
        return 1
    first = quote_lines[0]
    line = lines[first]
    if line.count('"""') + line.count("'''") >= 2:
        return first + 1
    return (quote_lines[1] + 1) if len(quote_lines) > 1 else first + 1


def _rename_param(fn: FunctionSource, rng: random.Random) -> Edit | None:
    options = [p for p, _, _ in fn.params if p in _BETTER_NAMES and p not in ("self", "cls")]
    if not options:
        return None
    old = rng.choice(options)
    new = _BETTER_NAMES[old]
    if re.search(rf"\b{new}\b", fn.source):
        return None
    return f"Rename the parameter `{old}` to `{new}` everywhere in the function, docstring included.", _word_sub(
        old, new, fn.source
    )


def _guard_none(fn: FunctionSource, rng: random.Random) -> Edit | None:
    options = [p for p, d, k in fn.params if d is None and k.startswith("positional") and p not in ("self", "cls")]
    if not options:
        return None
    param = rng.choice(options)
    lines = fn.source.split("\n")
    at = _body_start(fn)
    body_line = lines[at] if at < len(lines) else ""
    indent = body_line[: len(body_line) - len(body_line.lstrip())] or "    "
    guard = [f"{indent}if {param} is None:", f'{indent}    raise TypeError("{param} must not be None")']
    return (f"Add a check at the start of the body that raises TypeError if `{param}` is None.",
            "\n".join(lines[:at] + guard + lines[at:]))


def _drop_docstring(fn: FunctionSource, rng: random.Random) -> Edit | None:
    lines = fn.source.split("\n")
    at = _body_start(fn)
    if at <= 1 or at >= len(lines):
        return None
    return "Remove the docstring; keep everything else exactly as it is.", "\n".join(lines[:1] + lines[at:])


def _make_private(fn: FunctionSource, rng: random.Random) -> Edit | None:
    new = fn.name[1:] if fn.name.startswith("_") else f"_{fn.name}"
    verb = "public" if fn.name.startswith("_") else "private"
    return f"Make this function {verb} by renaming it to `{new}` (recursive calls included).", _word_sub(
        fn.name, new, fn.source
    )


def _change_default(fn: FunctionSource, rng: random.Random) -> Edit | None:
    options = [(p, d) for p, d, _ in fn.params if d is not None and re.fullmatch(r"-?\d+", d)]
    if not options:
        return None
    param, default = rng.choice(options)
    new_default = str(int(default) * 2 if int(default) else 1)
    first, *rest = fn.source.split("\n")
    pattern = rf"\b{param}\s*=\s*{re.escape(default)}\b"
    if not re.search(pattern, first):
        return None
    first = re.sub(pattern, f"{param}={new_default}", first, count=1)
    return f"Change the default value of `{param}` from {default} to {new_default}.", "\n".join([first, *rest])


EDITS: tuple[Callable[[FunctionSource, random.Random], Edit | None], ...] = (
    _rename_param, _guard_none, _drop_docstring, _make_private, _change_default,
)


def code_edit(corpus: Corpus, rng: random.Random) -> Task:
    while True:
        fn = rng.choice(corpus.functions)
        edit = rng.choice(EDITS)(fn, rng)
        if edit is not None and edit[1] != fn.source:
            break
    instruction, edited = edit
    reference = fenced(edited, "python")
    user = (f"Here is a function from the `{fn.module}` module:\n\n{fenced(fn.source, 'python')}\n\n{instruction} "
            "Return the complete updated function in a single code block.")
    messages = [{"role": "system", "content": "You are a careful senior Python engineer."},
                {"role": "user", "content": user}]
    body = chat_body(messages, reference, rng.choice([0.0, 0.0, 0.2, 0.3]))
    return Task("code_edit", "/v1/chat/completions", body, reference)


def _signature(fn: FunctionSource) -> str:
    return fn.source.split(":\n", 1)[0].removeprefix("def ").strip()


def code_gen(corpus: Corpus, rng: random.Random) -> Task:
    fn = rng.choice(corpus.functions)
    if rng.random() < 0.3:
        at = _body_start(fn)
        lines = fn.source.split("\n")
        prompt = f"# Module: {fn.module}\n" + "\n".join(lines[:at]) + "\n"
        reference = "\n".join(lines[at:])
        body = {"model": "target", "prompt": prompt, "max_tokens": max_tokens_for(reference),
                "temperature": rng.choice([0.0, 0.2]), "stream": True, "stop": ["\ndef ", "\nclass "]}
        return Task("code_gen", "/v1/completions", body, reference)
    user = (f"Write a Python function `{_signature(fn)}` for the `{fn.module}` module. It should do the following: "
            f"{fn.summary.rstrip('.')}. Include a docstring.")
    body = chat_body([{"role": "user", "content": user}], fenced(fn.source, "python"), rng.choice([0.2, 0.5, 0.7]))
    return Task("code_gen", "/v1/chat/completions", body, fenced(fn.source, "python"))
