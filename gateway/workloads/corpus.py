"""Real text found on the machine: the Python standard library's sources, docstrings, the reference
manual's prose (`pydoc_data.topics`), its license, IDLE's change log and the `email` package's test
messages. Nothing here is invented; the task generators cut prompts and references out of it.

Every source is optional except the standard library's `.py` files and `pydoc_data`, so the generators
work on a Python without its test suite (Debian splits it out) or without `LICENSE.txt`.
"""

from __future__ import annotations

import ast
import re
import sysconfig
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

# Modules whose functions feed the code and JSON-schema tasks: pure-Python, readable, stable across releases.
CODE_MODULES = (
    "base64", "bisect", "calendar", "colorsys", "csv", "dataclasses", "difflib", "fnmatch", "fractions",
    "functools", "glob", "gzip", "heapq", "html/__init__", "ipaddress", "json/decoder", "json/encoder",
    "mimetypes", "ntpath", "numbers", "posixpath", "quopri", "shlex", "shutil", "statistics", "string",
    "textwrap", "tokenize", "urllib/parse", "uuid", "email/utils", "email/_parseaddr", "http/cookies",
    "configparser", "argparse", "inspect", "random", "reprlib", "zipfile", "tarfile", "pprint", "secrets",
)
# Large sources used as long-context documents.
LONG_MODULES = ("argparse", "textwrap", "shlex", "difflib", "csv", "statistics", "configparser", "pprint")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def _is_plain_sentence(sentence: str) -> bool:
    return (
        40 <= len(sentence) <= 240
        and sentence[0].isupper()
        and sentence.endswith(".")
        and not any(ch in sentence for ch in '":;*`[]{}<>=_')
        and sentence.count("(") == sentence.count(")")
    )


@dataclass(frozen=True, slots=True)
class FunctionSource:
    module: str
    name: str
    source: str
    docstring: str
    params: tuple[tuple[str, str | None, str], ...]  # (name, default source or None, kind)
    returns: str | None
    raises: tuple[str, ...]

    @property
    def summary(self) -> str:
        return " ".join(self.docstring.strip().split("\n\n", 1)[0].split())


@dataclass(frozen=True, slots=True)
class NewsEntry:
    issue: str
    text: str


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


class _Source:
    """`ast.get_source_segment` without re-splitting the whole file on every call."""

    def __init__(self, src: str) -> None:
        self.lines = src.splitlines(keepends=True)

    def segment(self, node: ast.AST) -> str | None:
        lineno, end_lineno = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
        col, end_col = getattr(node, "col_offset", None), getattr(node, "end_col_offset", None)
        if lineno is None or end_lineno is None or col is None or end_col is None:
            return None
        first: bytes = self.lines[lineno - 1].encode()
        last: bytes = self.lines[end_lineno - 1].encode()
        if lineno == end_lineno:
            return first[col:end_col].decode()
        middle = "".join(self.lines[lineno : end_lineno - 1])
        return first[col:].decode() + middle + last[:end_col].decode()


def _params(node: ast.FunctionDef, src: _Source) -> tuple[tuple[str, str | None, str], ...]:
    args = node.args
    out: list[tuple[str, str | None, str]] = []
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    for arg, default in zip(positional, defaults, strict=True):
        kind = "positional_only" if arg in args.posonlyargs else "positional_or_keyword"
        out.append((arg.arg, None if default is None else src.segment(default), kind))
    if args.vararg:
        out.append((args.vararg.arg, None, "var_positional"))
    for arg, kw_default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        out.append((arg.arg, None if kw_default is None else src.segment(kw_default), "keyword_only"))
    if args.kwarg:
        out.append((args.kwarg.arg, None, "var_keyword"))
    return tuple(out)


def _raises(node: ast.FunctionDef) -> tuple[str, ...]:
    names: list[str] = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Raise) and sub.exc is not None:
            exc = sub.exc.func if isinstance(sub.exc, ast.Call) else sub.exc
            name = exc.id if isinstance(exc, ast.Name) else exc.attr if isinstance(exc, ast.Attribute) else None
            if name and name not in names:
                names.append(name)
    return tuple(names)


def _functions_in(module: str, text: str, min_lines: int, max_lines: int) -> list[FunctionSource]:
    tree = ast.parse(text)
    src = _Source(text)
    found: list[FunctionSource] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("__"):
            continue
        doc = ast.get_docstring(node)
        segment = src.segment(node)
        if not doc or segment is None or node.decorator_list:
            continue
        lines = segment.count("\n") + 1
        if not min_lines <= lines <= max_lines or "\t" in segment:
            continue
        found.append(
            FunctionSource(
                module=module.replace("/__init__", "").replace("/", "."),
                name=node.name,
                source=_dedent_def(segment, node.col_offset),
                docstring=doc,
                params=_params(node, src),
                returns=src.segment(node.returns) if node.returns else None,
                raises=_raises(node),
            )
        )
    return found


def _dedent_def(segment: str, col: int) -> str:
    first, *rest = segment.split("\n")
    return "\n".join([first, *(line[col:] if line[:col].strip() == "" else line for line in rest)])


class Corpus:
    """Lazy, read-only views over real text on this machine. Build one per generator run."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or stdlib_dir()

    def _read(self, rel: str) -> str | None:
        path = self.root / rel
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def module_source(self, module: str) -> str | None:
        return self._read(f"{module}.py")

    @cached_property
    def functions(self) -> list[FunctionSource]:
        out: list[FunctionSource] = []
        for module in CODE_MODULES:
            src = self.module_source(module)
            if src is not None:
                out.extend(_functions_in(module, src, min_lines=6, max_lines=45))
        return out

    @cached_property
    def topics(self) -> dict[str, str]:
        from pydoc_data.topics import topics

        return {key: topics[key] for key in sorted(topics)}

    @cached_property
    def emails(self) -> list[str]:
        folder = self.root / "test" / "test_email" / "data"
        out = []
        for path in sorted(folder.glob("msg_*.txt")):
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if 200 < len(text) < 6000 and "\nSubject:" in "\n" + text and "\nFrom:" in "\n" + text:
                out.append(text)
        return out

    @cached_property
    def news(self) -> list[NewsEntry]:
        text = self._read("idlelib/NEWS.txt") or ""
        out = []
        for para in re.split(r"\n\s*\n", text):
            match = re.match(r"((?:gh|bpo)-\d+):?\s+(.*)", para.strip(), re.S)
            if match:
                out.append(NewsEntry(match.group(1), " ".join(match.group(2).split())))
        return out

    @cached_property
    def license_text(self) -> str | None:
        return self._read("LICENSE.txt")

    @cached_property
    def module_docstrings(self) -> list[tuple[str, str]]:
        out = []
        for module in CODE_MODULES:
            src = self.module_source(module)
            if src is None:
                continue
            doc = ast.get_docstring(ast.parse(src))
            if doc and len(doc) > 200:
                out.append((module.replace("/__init__", "").replace("/", "."), doc))
        return out

    @cached_property
    def prose_sentences(self) -> list[str]:
        """Sentences of English prose from the reference manual and module docstrings (no code, no grammar)."""
        out: list[str] = []
        texts = list(self.topics.values()) + [doc for _, doc in self.module_docstrings]
        for text in texts:
            for para in re.split(r"\n\s*\n", text):
                if para.startswith((" ", "\t")) or "::=" in para or ">>>" in para or "***" in para:
                    continue
                flat = " ".join(para.split())
                for sentence in _SENTENCE.split(flat):
                    if _is_plain_sentence(sentence):
                        out.append(sentence)
        return out

    def long_documents(self, min_chars: int = 12000) -> list[tuple[str, str]]:
        docs: list[tuple[str, str]] = []
        if self.license_text and len(self.license_text) >= min_chars:
            docs.append(("the Python license (LICENSE.txt)", self.license_text))
        for key, text in self.topics.items():
            if len(text) >= min_chars:
                docs.append((f"the language reference section '{key}'", text))
        for module in LONG_MODULES:
            src = self.module_source(module)
            if src and len(src) >= min_chars:
                docs.append((f"the source of the `{module}` module", src))
        return docs
