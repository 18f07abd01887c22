"""Build the training corpus and its held-out split from text found on this machine (issue 39, step 1).

Sources, each cut into documents: the Python standard library's `.py` files, English man pages
(`/usr/share/man/man*/*.gz`, troff macros stripped) and tasks drawn from the project's workload generators
(`gateway.workloads`: JSON records, SQL, code edits and generation, chat, creative, long-context QA), each
rendered as its prompt (the chat template of `../shared/gpu/models/target`) followed by its reference answer.

The split is by document: a document goes to held-out iff a hash of (seed, its text) falls under the
held-out fraction, so the split is deterministic for a seed, identical texts land on the same side, and no
held-out text is ever trained on. Writes `train.jsonl`, `heldout.jsonl` (one document a line) and
`manifest.json` to --out. Stdlib only (+ the project's `gateway.workloads` for the task documents).

    python deploy/gpu/train/build_corpus.py --out deploy/gpu/train/out/data --max-mb 30
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import random
import re
import sysconfig
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# Workload kinds drawn for the corpus and how many of each (scaled by --max-mb / 30).
KIND_COUNTS = {"json_object": 300, "json_schema": 200, "extraction_json": 400, "sql": 500, "code_edit": 500,
               "code_gen": 500, "chat": 500, "extraction": 150, "creative": 500, "long_context": 220}
SHARES = {"stdlib": 0.50, "man": 0.20}  # of --max-mb; the workload tasks take what they take (~8 MB at 30)
TROFF_ESCAPE = re.compile(r"\\f[BIRP1-4]|\\f\(..|\\\(..|\\[&|^%]|\\s[-+]?\d")


@dataclass(frozen=True, slots=True)
class Doc:
    """One document: `text` is what training sees; task documents also keep their prompt parts."""

    id: str
    source: str  # "stdlib", "man" or "workload"
    text: str
    kind: str = ""  # workload kind (gateway.workloads.task.KINDS) for task documents
    prompt: str = ""  # the rendered prompt (chat template applied); text == prompt + reference
    reference: str = ""
    meta: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, endpoint of the task


def render_messages(messages: list[dict[str, str]]) -> str:
    """The chat template of ../shared/gpu/models/target/tokenizer_config.json, with the generation prompt."""
    return "".join(f"<|{m['role']}|>{m['content']}\n" for m in messages) + "<|assistant|>"


def task_doc(kind: str, body: dict[str, Any], reference: str) -> Doc:
    prompt = render_messages(body["messages"]) if "messages" in body else str(body.get("prompt", ""))
    meta = {"temperature": body.get("temperature", 0.0), "max_tokens": body.get("max_tokens", 256)}
    return Doc(id=f"workload:{kind}:{digest(prompt + reference)[:16]}", source="workload", text=prompt + reference,
               kind=kind, prompt=prompt, reference=reference, meta=meta)


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def is_heldout(doc: Doc, seed: int, fraction: float) -> bool:
    """Deterministic for (seed, text): the same text is always on the same side."""
    h = hashlib.sha256(f"{seed}\0{doc.text}".encode("utf-8", "surrogatepass")).digest()
    return int.from_bytes(h[:8], "big") / 2**64 < fraction


def split_docs(docs: Iterable[Doc], seed: int, fraction: float) -> tuple[list[Doc], list[Doc]]:
    """(train, heldout), duplicates (same text) dropped; order kept."""
    train: list[Doc] = []
    held: list[Doc] = []
    seen: set[str] = set()
    for doc in docs:
        key = digest(doc.text)
        if key in seen or not doc.text.strip():
            continue
        seen.add(key)
        (held if is_heldout(doc, seed, fraction) else train).append(doc)
    return train, held


def _take(docs: Iterable[Doc], max_bytes: int) -> Iterator[Doc]:
    used = 0
    for doc in docs:
        size = len(doc.text.encode("utf-8", "surrogatepass"))
        if used + size > max_bytes:
            continue  # a smaller one may still fit
        used += size
        yield doc


def stdlib_docs(root: Path, max_bytes: int, max_file_bytes: int = 200_000) -> Iterator[Doc]:
    """The standard library's .py files (not site-packages), in path order, each at most `max_file_bytes`."""
    paths = sorted((p for p in root.rglob("*.py") if "site-packages" not in p.parts and "idlelib" not in p.parts),
                   key=lambda p: digest(p.as_posix()))  # a fixed shuffle, so a small budget is not all `a*`
    docs = (Doc(id=f"stdlib:{p.relative_to(root).as_posix()}", source="stdlib", text=text)
            for p in paths if (text := _read(p)) and len(text) <= max_file_bytes)
    return _take(docs, max_bytes)


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def troff_to_text(src: str) -> str:
    """Plain text from a man page's troff source: macros dropped, their arguments kept, escapes removed."""
    out = []
    for line in src.splitlines():
        if line.startswith(('.\\"', "'\\\"", '.\\\\"')):
            continue
        if line.startswith((".", "'")):
            _, _, rest = line.partition(" ")
            line = rest.replace('"', "")
        line = TROFF_ESCAPE.sub("", line).replace("\\-", "-").replace("\\ ", " ").replace("\\e", "\\")
        if line.strip():
            out.append(line.strip())
    return "\n".join(out)


def man_docs(root: Path, max_bytes: int) -> Iterator[Doc]:
    """English man pages (man1..man8 directly under `root`), decompressed and stripped of troff."""
    def gen() -> Iterator[Doc]:
        for path in sorted(root.glob("man[1-8]/*.gz"), key=lambda p: digest(p.as_posix())):
            try:
                src = gzip.decompress(path.read_bytes()).decode("utf-8", "replace")
            except (OSError, EOFError):
                continue
            if src.startswith(".so "):  # a link to another page
                continue
            text = troff_to_text(src)
            if len(text) > 200:
                yield Doc(id=f"man:{path.parent.name}/{path.name}", source="man", text=text[:60_000])
    return _take(gen(), max_bytes)


def workload_docs(scale: float, seed: int) -> Iterator[Doc]:
    """Tasks from the project's workload generators, KIND_COUNTS[kind] * scale of each kind."""
    from gateway.workloads.corpus import Corpus
    from gateway.workloads.generate import draw_task

    corpus = Corpus()
    for kind, count in KIND_COUNTS.items():
        rng = random.Random(f"{seed}:{kind}")
        for _ in range(max(int(count * scale), 4)):
            task = draw_task(kind, corpus, rng)
            if task is not None:
                yield task_doc(kind, task.body, task.reference)


def build(max_mb: float, seed: int, heldout: float, man_root: Path | None, stdlib_root: Path) -> tuple[
        list[Doc], list[Doc]]:
    budget = int(max_mb * 1e6)
    docs: list[Doc] = list(workload_docs(max_mb / 30.0, seed))
    docs += list(stdlib_docs(stdlib_root, int(budget * SHARES["stdlib"])))
    if man_root is not None and man_root.is_dir():
        docs += list(man_docs(man_root, int(budget * SHARES["man"])))
    return split_docs(docs, seed, heldout)


def write_jsonl(path: Path, docs: Iterable[Doc]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for doc in docs:
            f.write(json.dumps(asdict(doc), ensure_ascii=False) + "\n")


def read_jsonl(path: Path) -> list[Doc]:
    with path.open(encoding="utf-8") as f:
        return [Doc(**json.loads(line)) for line in f if line.strip()]


def summary(train: list[Doc], held: list[Doc]) -> dict[str, Any]:
    def count(docs: list[Doc]) -> dict[str, Any]:
        by = Counter(d.kind or d.source for d in docs)
        return {"docs": len(docs), "mbytes": round(sum(len(d.text.encode("utf-8", "surrogatepass"))
                                                        for d in docs) / 1e6, 3), "by_source": dict(sorted(by.items()))}
    return {"train": count(train), "heldout": count(held)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--max-mb", type=float, default=30.0, help="about this many MB of text in all")
    p.add_argument("--seed", type=int, default=39)
    p.add_argument("--heldout", type=float, default=0.08, help="fraction of documents held out")
    p.add_argument("--man-root", type=Path, default=Path("/usr/share/man"))
    p.add_argument("--stdlib-root", type=Path, default=Path(sysconfig.get_paths()["stdlib"]))
    args = p.parse_args(argv)
    train, held = build(args.max_mb, args.seed, args.heldout, args.man_root, args.stdlib_root)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "train.jsonl", train)
    write_jsonl(args.out / "heldout.jsonl", held)
    manifest = {"seed": args.seed, "heldout_fraction": args.heldout, "max_mb": args.max_mb,
                "stdlib_root": str(args.stdlib_root), "man_root": str(args.man_root), **summary(train, held)}
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
