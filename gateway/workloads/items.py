"""The workload file format (JSON Lines) and its reader/writer.

One request per line: `{"id", "t", "endpoint", "body", "reference"?, "kind"?}`. `t` is the send time in
seconds from the start of the run; `reference` is ground truth for the emulator only; extra keys are kept
in `extra` and written back unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

ENDPOINTS = ("/v1/chat/completions", "/v1/completions")
_KNOWN = {"id", "t", "endpoint", "body", "reference", "kind", "tokens_per_step"}


def is_tokens_per_step(value: object) -> bool:
    """A synthetic acceptance a request may carry: a number of tokens per speculative step in [1, 64]."""
    return isinstance(value, int | float) and not isinstance(value, bool) and 1.0 <= value <= 64.0


class WorkloadError(ValueError):
    """A workload file or line that does not follow the format."""


@dataclass(frozen=True, slots=True)
class WorkloadItem:
    id: str
    t: float
    endpoint: str
    body: dict[str, Any]
    reference: str | None = None
    kind: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The emulator's synthetic acceptance for this request: mean tokens per speculative step (`plan --from`
    # sets each request's class's measured value); None: the drafter's real guesses over `reference`.
    tokens_per_step: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "t": round(self.t, 6), "endpoint": self.endpoint, "body": self.body}
        if self.reference is not None:
            out["reference"] = self.reference
        if self.kind is not None:
            out["kind"] = self.kind
        if self.tokens_per_step is not None:
            out["tokens_per_step"] = self.tokens_per_step
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: Any, where: str = "") -> WorkloadItem:
        if not isinstance(obj, dict):
            raise WorkloadError(f"{where}: expected a JSON object")
        try:
            item_id, t, endpoint, body = str(obj["id"]), float(obj["t"]), str(obj["endpoint"]), obj["body"]
        except (KeyError, TypeError, ValueError) as exc:
            raise WorkloadError(f"{where}: missing or invalid field {exc}") from exc
        if not isinstance(body, dict):
            raise WorkloadError(f"{where}: body must be an object")
        if t < 0:
            raise WorkloadError(f"{where}: t must be >= 0")
        reference = obj.get("reference")
        kind = obj.get("kind")
        tps = obj.get("tokens_per_step")
        if tps is not None and not is_tokens_per_step(tps):
            raise WorkloadError(f"{where}: tokens_per_step must be a number in [1, 64]")
        return cls(
            id=item_id,
            t=t,
            endpoint=endpoint,
            body=body,
            reference=None if reference is None else str(reference),
            kind=None if kind is None else str(kind),
            tokens_per_step=None if tps is None else float(tps),
            extra={k: v for k, v in obj.items() if k not in _KNOWN},
        )


def parse_jsonl(text: str, source: str = "<workload>") -> list[WorkloadItem]:
    items = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise WorkloadError(f"{source}:{lineno}: {exc}") from exc
        items.append(WorkloadItem.from_json(obj, f"{source}:{lineno}"))
    ids = [item.id for item in items]
    if len(set(ids)) != len(ids):
        raise WorkloadError(f"{source}: duplicate request ids")
    return sorted(items, key=lambda item: item.t)


def dumps_jsonl(items: Iterable[WorkloadItem]) -> str:
    return "".join(json.dumps(item.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n" for item in items)


def write_workload(items: Iterable[WorkloadItem], path: str | Path) -> None:
    Path(path).write_text(dumps_jsonl(items), encoding="utf-8")


def builtin_names() -> list[str]:
    folder = resources.files("gateway.workloads").joinpath("builtin")
    return sorted(p.name.removesuffix(".jsonl") for p in folder.iterdir() if p.name.endswith(".jsonl"))


def load_workload(name_or_path: str | Path) -> list[WorkloadItem]:
    """A workload file by path, or a built-in one by name (`demo-mixed`, `mixed-low`, ...)."""
    path = Path(name_or_path)
    if path.is_file():
        return parse_jsonl(path.read_text(encoding="utf-8"), str(path))
    name = str(name_or_path).removesuffix(".jsonl")
    resource = resources.files("gateway.workloads").joinpath("builtin", f"{name}.jsonl")
    if resource.is_file():
        return parse_jsonl(resource.read_text(encoding="utf-8"), f"builtin:{name}")
    raise WorkloadError(f"no workload file or built-in workload named {name_or_path!r} (built-in: {builtin_names()})")
