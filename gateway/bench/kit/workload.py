"""A tiny mixed workload with short outputs: a bench replay that finishes in seconds."""

from __future__ import annotations

from pathlib import Path

from gateway.workloads.generate import Arrival, generate
from gateway.workloads.items import WorkloadItem, write_workload


def tiny_workload(path: Path) -> list[WorkloadItem]:
    """Eight requests (sql, code edit, creative, chat) with at most 96 output tokens, written to `path`."""
    items = generate(8, "sql=1,code_edit=1,creative=1,chat=1", Arrival(rate=8.0), seed=4)
    small = []
    for item in items:  # keep the replay short: small outputs
        ref = item.reference[:300] if item.reference else None
        body = {**item.body, "max_tokens": 96}
        small.append(WorkloadItem(item.id, item.t, item.endpoint, body, ref, item.kind))
    write_workload(small, path)
    return small
