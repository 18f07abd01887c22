"""Pure parse of a vLLM `/metrics` scrape into an immutable snapshot (a targeted scan of the few series read;
prometheus_client's parser is the tests' reference).

Series are summed over their label sets (several engines, or the `model_name` label), so a server with
data parallelism reads the same as one engine. A baseline exports no `vllm:spec_decode_*` series.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

_GAUGES = {
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv_cache_usage",
}
_COUNTERS = {
    "vllm:spec_decode_num_drafts": "drafts",
    "vllm:spec_decode_num_draft_tokens": "draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "accepted_tokens",
    "vllm:generation_tokens": "generation_tokens",
    "vllm:prefix_cache_queries": "prefix_queries",  # prompt tokens the server looked up (the prefix index's scale)
}


@dataclass(frozen=True, slots=True)
class VllmSnapshot:
    running: float = 0.0
    waiting: float = 0.0
    kv_cache_usage: float = 0.0
    generation_tokens: float = 0.0
    has_spec_decode: bool = False
    drafts: float = 0.0
    draft_tokens: float = 0.0
    accepted_tokens: float = 0.0
    accepted_per_position: tuple[float, ...] = ()
    prefix_queries: float = 0.0


@dataclass(frozen=True, slots=True)
class SpecDelta:
    """Spec-decode activity between two scrapes."""

    drafts: float
    draft_tokens: float
    accepted_tokens: float
    generation_tokens: float = 0.0

    @property
    def tokens_per_step(self) -> float:
        """Output tokens per engine step over all steps, drafted or not: each sequence-step emits one token
        plus its accepted drafts. (`mean_acceptance_length` counts only steps that drafted, which for
        n-gram lookup overstated speed on the H200: 3.29 against 1.6–1.7 per request.)"""
        steps = self.generation_tokens - self.accepted_tokens
        if steps <= 0:
            return self.mean_acceptance_length
        return self.generation_tokens / steps

    @property
    def acceptance_rate(self) -> float:
        return self.accepted_tokens / self.draft_tokens if self.draft_tokens > 0 else 0.0

    @property
    def mean_acceptance_length(self) -> float:
        """Tokens per engine step: the target's token plus the accepted drafts."""
        return 1.0 + self.accepted_tokens / self.drafts if self.drafts > 0 else 1.0


# What a real server can report: a value outside these (or NaN, or an infinity) makes the whole scrape a failed one,
# so the previous good state stays (one NaN gauge made the pool's load NaN for good: inf - inf).
MAX_REQUESTS = 1e6  # running or waiting on one server
MAX_KV_USAGE = 100.0  # a ratio (0-1); some exporters write percent
MAX_COUNTER = float(2**63)
MAX_POSITION = 1024  # draft positions (γ is a handful)
_RANGES = {"running": MAX_REQUESTS, "waiting": MAX_REQUESTS, "kv_cache_usage": MAX_KV_USAGE}


class BadScrape(ValueError):
    """A scrape with a value no server reports (not finite, negative, out of range): read as a failed scrape."""


def _check(field: str, value: float) -> None:
    top = _RANGES.get(field, MAX_COUNTER)
    if not (math.isfinite(value) and 0.0 <= value <= top):
        raise BadScrape(f"{field} {value!r} is out of range [0, {top:g}]")


_FIELDS = {**_GAUGES, **{name + "_total": field for name, field in _COUNTERS.items()}, **_COUNTERS}
_PER_POSITION = "vllm:spec_decode_num_accepted_tokens_per_pos"
# One sample line of a series we read: name, optional labels (to the line's last `}`: a label value may hold
# one), value. Gauges by their exact name, counters with or without `_total`; `_created` and other series whose
# names only start the same (`vllm:num_requests_waiting_by_reason`) do not match.
_SAMPLE = re.compile(  # after a newline: the literal prefix lets the scan skip ahead (`^` with re.M was 10x slower)
    r"\n(vllm:(?:" + "|".join(re.escape(name.removeprefix("vllm:"))
                               for name in sorted([*_FIELDS, _PER_POSITION + "_total", _PER_POSITION],
                                                  key=len, reverse=True))
    + r"))(\{.*\})?[ \t]+(\S+)")
_POSITION = re.compile(r'(?:^|[{,])\s*position="(\d+)"')
_SPEC_FAMILY = re.compile(r"\n(?:# (?:HELP|TYPE) )?vllm:spec_decode")


def parse_vllm_metrics(text: str) -> VllmSnapshot:
    """The series specgate reads, each summed over its label sets. A targeted scan rather than a full
    exposition parse: prometheus_client's parser took ~10 ms on a real vLLM scrape (48 KB), every
    `scrape_interval_s` for every backend, on the event loop; this takes well under a millisecond and reads
    the same numbers (tests/test_learner.py checks both parsers agree on the real fixtures). `ValueError` when
    none of those series is there (not a vLLM scrape: an error page, a proxy's answer); `BadScrape` (a
    `ValueError`) when one of them is not finite or out of its range: the scrape failed, and the caller keeps
    its previous snapshot."""
    values: dict[str, float] = {}
    per_position: dict[int, float] = {}
    lines = "\n" + text  # every sample line starts after a newline, the first one too
    for name, labels, raw in _SAMPLE.findall(lines):
        try:
            value = float(raw)
        except ValueError:
            continue
        if name.startswith(_PER_POSITION):
            found = _POSITION.search(labels) if labels else None
            if found is not None:
                pos = int(found.group(1))
                per_position[pos] = per_position.get(pos, 0.0) + value
            continue
        field = _FIELDS[name]
        values[field] = values.get(field, 0.0) + value
    if not values and not per_position:
        raise ValueError("none of the vLLM series specgate reads is in the scrape")
    for field_name, total in values.items():
        _check(field_name, total)
    for pos, total in per_position.items():
        if pos > MAX_POSITION:
            raise BadScrape(f"accepted tokens at draft position {pos} (at most {MAX_POSITION})")
        _check("accepted_tokens_per_pos", total)
    positions = tuple(per_position[i] for i in sorted(per_position))
    has_spec = "vllm:spec_decode" in text and _SPEC_FAMILY.search(lines) is not None  # a baseline: no scan
    return VllmSnapshot(has_spec_decode=has_spec, accepted_per_position=positions, **values)


def parse_vllm_metrics_reference(text: str) -> VllmSnapshot:
    """The same snapshot through prometheus_client's full parser (slow; the tests' reference)."""
    values: dict[str, float] = {}
    per_position: dict[int, float] = {}
    has_spec = False
    for family in text_string_to_metric_families(text):
        name = family.name.removesuffix("_total")  # an untyped `_total` series reads like its counter
        if name.startswith("vllm:spec_decode"):
            has_spec = True
        if name in _GAUGES:
            field = _GAUGES[name]
            values[field] = sum(s.value for s in family.samples if s.name == name)
        elif name in _COUNTERS:
            field = _COUNTERS[name]
            values[field] = sum(s.value for s in family.samples if s.name in (name, name + "_total"))
        elif name == _PER_POSITION:
            for s in family.samples:
                if not s.name.endswith("_created") and "position" in s.labels:
                    pos = int(s.labels["position"])
                    per_position[pos] = per_position.get(pos, 0.0) + s.value
    positions = tuple(per_position[i] for i in sorted(per_position))
    return VllmSnapshot(has_spec_decode=has_spec, accepted_per_position=positions, **values)


def spec_delta(before: VllmSnapshot | None, after: VllmSnapshot) -> SpecDelta | None:
    """Counter deltas; None without a previous scrape, spec counters, or after a counter reset."""
    if before is None or not after.has_spec_decode or not before.has_spec_decode:
        return None
    d = SpecDelta(
        after.drafts - before.drafts,
        after.draft_tokens - before.draft_tokens,
        after.accepted_tokens - before.accepted_tokens,
        max(after.generation_tokens - before.generation_tokens, 0.0),
    )
    if d.drafts < 0 or d.draft_tokens < 0 or d.accepted_tokens < 0:
        return None
    return d



# after a newline, not `^` with re.MULTILINE: the literal prefix lets the scan skip ahead (26 against 290 µs on a
# real 48 KB scrape)
_LOAD_SAMPLE = re.compile(rb"\nvllm:num_requests_(?:running|waiting)(?:\{[^}\n]*\})? (\S+)")


def parse_load(text: bytes) -> float | None:
    """Running + waiting requests from a scrape without parsing the rest (it is read every
    `load_scrape_interval_s`, so it must be cheap): both gauges summed over their label sets; None (a failed
    scrape: the caller keeps its previous load) if neither is there, or a value is not a number, not finite,
    negative, or the sum more than `MAX_REQUESTS` x 2."""
    values = _LOAD_SAMPLE.findall(b"\n" + text)
    if not values:
        return None
    try:
        numbers = [float(v) for v in values]
    except ValueError:
        return None
    total = sum(numbers)
    if not (math.isfinite(total) and 0.0 <= total <= 2 * MAX_REQUESTS) or min(numbers) < 0.0:
        return None
    return total
