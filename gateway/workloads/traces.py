"""Public production traces read into arrival times and token counts (`specgate workload --from-trace`).

Four formats, read from the published files (fetched, not vendored; docs/emulator.md says how to get them):

- `azure-code`, `azure-conv`: Azure LLM inference traces 2023 (`Azure/AzurePublicDataset`,
  `data/AzureLLMInferenceTrace_{code,conv}.csv`): `TIMESTAMP,ContextTokens,GeneratedTokens`, the timestamp a
  date-time with 7 fractional digits;
- `burstgpt`: BurstGPT (`HPMLL/BurstGPT`, `data/BurstGPT_*.csv`), columns by name: `Timestamp` (seconds),
  `Request tokens`, `Response tokens`, `Log Type` (`Conversation log` | `API log`); `Session ID` and
  `Elapsed time` (BurstGPT_3) are ignored. Rows with zero response tokens are failed requests and dropped;
- `mooncake`: Mooncake FAST'25 (`kvcache-ai/Mooncake`, `FAST25-release/traces/*.jsonl`): `timestamp`
  (milliseconds), `input_length`, `output_length`, `hash_ids` (one id per 512-token block of the prompt; two
  requests share a prefix exactly as far as their leading ids agree).

`select` cuts a window (seconds from the trace's first row) and scales the arrival rate: times are re-based
to the window's start and divided by the rate scale. Everything here is pure: text in, rows out.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

SOURCES = ("azure-code", "azure-conv", "burstgpt", "mooncake")
MOONCAKE_BLOCK_TOKENS = 512


class TraceError(ValueError):
    """A trace file that does not follow its source's format."""


@dataclass(frozen=True, slots=True)
class TraceRow:
    t: float  # seconds from the trace's first row
    prompt_tokens: int
    output_tokens: int
    row: int  # index in the source file (data rows, from 0)
    log_type: str | None = None  # BurstGPT's `Log Type`
    hash_ids: tuple[int, ...] = ()  # Mooncake's prefix blocks


@dataclass(slots=True)
class Trace:
    source: str
    rows: list[TraceRow]
    read: int = 0  # data rows in the file
    dropped: dict[str, int] = field(default_factory=dict)  # reason -> rows


def _azure_time(text: str) -> float:
    """`2023-11-16 18:17:03.9799600` (7 fractional digits, more than `fromisoformat` takes before 3.11's
    fixes everywhere) as POSIX seconds."""
    whole, _, frac = text.strip().partition(".")
    return datetime.fromisoformat(whole).timestamp() + (float("0." + frac) if frac else 0.0)


def _int(value: str | None, name: str, where: str) -> int:
    try:
        return int(float(value or ""))
    except ValueError:
        raise TraceError(f"{where}: {name} is not a number: {value!r}") from None


def read_azure(text: str, source: str = "azure-code") -> Trace:
    reader = csv.DictReader(io.StringIO(text))
    need = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}
    if not reader.fieldnames or not need <= set(reader.fieldnames):
        raise TraceError(f"{source}: expected the columns {sorted(need)}, got {reader.fieldnames}")
    trace = Trace(source, [])
    stamps: list[tuple[float, int, int, int]] = []
    for i, rec in enumerate(reader):
        where = f"{source} row {i + 2}"
        try:
            t = _azure_time(rec["TIMESTAMP"])
        except ValueError:
            raise TraceError(f"{where}: bad TIMESTAMP {rec['TIMESTAMP']!r}") from None
        stamps.append((t, _int(rec["ContextTokens"], "ContextTokens", where),
                       _int(rec["GeneratedTokens"], "GeneratedTokens", where), i))
    trace.read = len(stamps)
    t0 = min((s[0] for s in stamps), default=0.0)
    for t, prompt, out, i in stamps:
        if out <= 0:
            trace.dropped["zero_output"] = trace.dropped.get("zero_output", 0) + 1
            continue
        trace.rows.append(TraceRow(round(t - t0, 6), max(prompt, 1), out, i))
    trace.rows.sort(key=lambda r: r.t)
    return trace


def read_burstgpt(text: str) -> Trace:
    reader = csv.DictReader(io.StringIO(text))
    need = {"Timestamp", "Request tokens", "Response tokens"}
    if not reader.fieldnames or not need <= set(reader.fieldnames):
        raise TraceError(f"burstgpt: expected the columns {sorted(need)}, got {reader.fieldnames}")
    trace = Trace("burstgpt", [])
    raw: list[TraceRow] = []
    for i, rec in enumerate(reader):
        where = f"burstgpt row {i + 2}"
        trace.read += 1
        t = float(rec["Timestamp"] or 0)
        prompt = _int(rec["Request tokens"], "Request tokens", where)
        out = _int(rec["Response tokens"], "Response tokens", where)
        reason = "zero_output" if out <= 0 else "zero_prompt" if prompt <= 0 else None
        if reason:
            trace.dropped[reason] = trace.dropped.get(reason, 0) + 1
            continue
        raw.append(TraceRow(t, prompt, out, i, log_type=(rec.get("Log Type") or None)))
    t0 = min((r.t for r in raw), default=0.0)
    trace.rows = sorted((TraceRow(round(r.t - t0, 6), r.prompt_tokens, r.output_tokens, r.row, r.log_type)
                         for r in raw), key=lambda r: r.t)
    return trace


def read_mooncake(text: str) -> Trace:
    trace = Trace("mooncake", [])
    raw: list[TraceRow] = []
    for i, line in enumerate(line for line in text.splitlines() if line.strip()):
        try:
            obj = json.loads(line)
            t_ms, prompt, out = float(obj["timestamp"]), int(obj["input_length"]), int(obj["output_length"])
            ids = tuple(int(h) for h in obj.get("hash_ids") or ())
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise TraceError(f"mooncake line {i + 1}: {exc}") from None
        trace.read += 1
        if out <= 0 or prompt <= 0:
            trace.dropped["zero_length"] = trace.dropped.get("zero_length", 0) + 1
            continue
        raw.append(TraceRow(t_ms / 1000.0, prompt, out, i, hash_ids=ids))
    t0 = min((r.t for r in raw), default=0.0)
    trace.rows = sorted((TraceRow(round(r.t - t0, 6), r.prompt_tokens, r.output_tokens, r.row, None, r.hash_ids)
                         for r in raw), key=lambda r: r.t)
    return trace


def read_trace(source: str, text: str) -> Trace:
    if source in ("azure-code", "azure-conv"):
        return read_azure(text, source)
    if source == "burstgpt":
        return read_burstgpt(text)
    if source == "mooncake":
        return read_mooncake(text)
    raise TraceError(f"unknown trace source {source!r}; choose from {', '.join(SOURCES)}")


def parse_window(spec: str | None) -> tuple[float, float | None]:
    """`START:SECONDS` -> (start, seconds); `START:` or `START` -> to the end; None -> the whole trace."""
    if not spec:
        return 0.0, None
    start, _, length = spec.partition(":")
    try:
        begin, span = float(start or 0), (float(length) if length else None)
    except ValueError:
        raise TraceError(f"--window is START:SECONDS, got {spec!r}") from None
    if begin < 0 or (span is not None and span <= 0):
        raise TraceError(f"--window needs START >= 0 and SECONDS > 0, got {spec!r}")
    return begin, span


def select(rows: Sequence[TraceRow], start: float = 0.0, seconds: float | None = None,
           rate_scale: float = 1.0, max_requests: int | None = None) -> list[TraceRow]:
    """The rows in [start, start + seconds), times re-based to `start` and divided by `rate_scale` (2.0: the
    same requests at twice the rate); at most `max_requests` of them."""
    if rate_scale <= 0:
        raise TraceError("--rate-scale must be > 0")
    end = float("inf") if seconds is None else start + seconds
    out = [TraceRow(round((r.t - start) / rate_scale, 6), r.prompt_tokens, r.output_tokens, r.row, r.log_type,
                    r.hash_ids) for r in rows if start <= r.t < end]
    return out[:max_requests] if max_requests is not None else out


def describe(rows: Sequence[TraceRow]) -> dict[str, float | int | None]:
    """Count, span, mean rate, the busiest second and mean lengths of some rows."""
    if not rows:
        return {"requests": 0}
    span = rows[-1].t - rows[0].t
    per_second: dict[int, int] = {}
    for r in rows:
        per_second[int(r.t)] = per_second.get(int(r.t), 0) + 1
    return {"requests": len(rows), "span_s": round(span, 3),
            "mean_rate_per_s": round(len(rows) / span, 3) if span > 0 else None,
            "peak_per_s": max(per_second.values()),
            "mean_prompt_tokens": round(sum(r.prompt_tokens for r in rows) / len(rows), 1),
            "mean_output_tokens": round(sum(r.output_tokens for r in rows) / len(rows), 1)}
