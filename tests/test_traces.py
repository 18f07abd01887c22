"""Workloads from public production traces (`specgate workload --from-trace`), on small committed fixtures:
the first 300 rows of the real Azure 2023 code and conv traces and of Mooncake's conversation trace, and a
file in BurstGPT's published format (tests/fixtures/traces/README.md says which is which)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gateway.emulator.prefix_cache import block_hashes
from gateway.emulator.text import tokenize
from gateway.emulator.wire import prompt_of
from gateway.workloads import cli
from gateway.workloads.items import load_workload
from gateway.workloads.trace_content import CODE_MIX, CONV_MIX, build_items
from gateway.workloads.traces import TraceError, parse_window, read_trace, select

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
AZURE_CODE = FIXTURES / "azure_code_300.csv"
AZURE_CONV = FIXTURES / "azure_conv_300.csv"
BURSTGPT = FIXTURES / "burstgpt_format_300.csv"
MOONCAKE = FIXTURES / "mooncake_conversation_300.jsonl"


def _tokens(body: dict[str, Any]) -> list[str]:
    return tokenize(prompt_of(body))


def test_azure_rows_keep_the_trace_times_and_lengths() -> None:
    trace = read_trace("azure-code", AZURE_CODE.read_text())
    assert trace.read == 300 and len(trace.rows) == 300
    first, second = trace.rows[0], trace.rows[1]
    assert (first.t, first.prompt_tokens, first.output_tokens) == (0.0, 4808, 10)  # 18:17:03.9799600
    assert second.t == pytest.approx(0.052, abs=1e-6)  # 18:17:04.0319600
    assert (second.prompt_tokens, second.output_tokens) == (3180, 8)
    assert all(a.t <= b.t for a, b in zip(trace.rows, trace.rows[1:], strict=False))


def test_window_rebases_and_rate_scale_compresses_time() -> None:
    rows = read_trace("azure-conv", AZURE_CONV.read_text()).rows
    start, seconds = parse_window("10:20")
    inside = [r for r in rows if 10 <= r.t < 30]
    picked = select(rows, start, seconds, rate_scale=2.0)
    assert len(picked) == len(inside) > 0
    assert [p.row for p in picked] == [r.row for r in inside]
    assert picked[0].t == pytest.approx((inside[0].t - 10) / 2, abs=1e-6)
    assert max(p.t for p in picked) < 10.0  # 20 trace seconds at twice the rate
    assert len(select(rows, 0, None, max_requests=7)) == 7
    with pytest.raises(TraceError):
        parse_window("10:-5")
    with pytest.raises(TraceError):
        select(rows, rate_scale=0)


def test_burstgpt_drops_failed_requests_and_reads_columns_by_name() -> None:
    text = BURSTGPT.read_text()
    trace = read_trace("burstgpt", text)
    failed = sum(1 for line in text.splitlines()[1:] if line.split(",")[3] == "0")
    assert failed > 0 and trace.dropped == {"zero_output": failed}
    assert len(trace.rows) == 300 - failed
    assert (trace.rows[0].t, trace.rows[0].prompt_tokens, trace.rows[0].log_type) == (0.0, 472, "Conversation log")
    assert trace.rows[1].t == 40.0
    # BurstGPT_3 inserts `Session ID` and `Elapsed time` after `Timestamp`: read by name, not by position
    v3 = "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n" \
         "7,abc,3.5,ChatGPT,100,20,120,Conversation log\n"
    row = read_trace("burstgpt", v3).rows[0]
    assert (row.prompt_tokens, row.output_tokens) == (100, 20)


def test_burstgpt_class_follows_the_log_type() -> None:
    rows = read_trace("burstgpt", BURSTGPT.read_text()).rows[:60]
    items, _ = build_items("burstgpt", rows, seed=3)
    conv = [i for i, r in zip(items, rows, strict=True) if r.log_type == "Conversation log"]
    assert conv and all(i.kind in CONV_MIX for i in conv)


def test_content_is_sized_to_the_trace() -> None:
    rows = read_trace("azure-code", AZURE_CODE.read_text()).rows[:40]
    items, sizing = build_items("azure-code", rows, seed=1)
    assert {i.kind for i in items} <= set(CODE_MIX) and len({i.kind for i in items}) >= 3
    for item, row in zip(items, rows, strict=True):
        assert abs(len(_tokens(item.body)) - row.prompt_tokens) <= 2, item.id
        assert abs(len(tokenize(item.reference or "")) + 1 - row.output_tokens) <= 1, item.id  # + EOS
        assert item.body["max_tokens"] >= row.output_tokens and "stop" not in item.body
        assert item.t == row.t and item.extra["trace"]["row"] == row.row
    assert sizing.context_clipped == 0


def test_mix_flag_overrides_the_trace_kind() -> None:
    rows = read_trace("azure-code", AZURE_CODE.read_text()).rows[:15]
    items, _ = build_items("azure-code", rows, mix="creative=1", seed=2)
    assert {i.kind for i in items} == {"creative"}


def test_mooncake_blocks_share_text_exactly_where_the_trace_shares_blocks() -> None:
    trace = read_trace("mooncake", MOONCAKE.read_text())
    assert trace.rows[-1].t == 102.0  # milliseconds in the file
    by_row = {r.row: r for r in trace.rows}
    a, b = by_row[24], by_row[220]
    shared = next(k for k, (x, y) in enumerate(zip(a.hash_ids, b.hash_ids, strict=False)) if x != y)
    assert shared == 29
    items, _ = build_items("mooncake", [a, b], seed=0)
    ta, tb = _tokens(items[0].body), _tokens(items[1].body)
    common = next(i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y)
    assert shared * 512 <= common < (shared + 1) * 512 + 8
    ha, hb = block_hashes(ta, 16), block_hashes(tb, 16)
    hits = next(i for i, (x, y) in enumerate(zip(ha, hb, strict=False)) if x != y)
    assert hits >= shared * 512 // 16 - 1  # the emulator's prefix cache would hit the shared blocks
    # rows sharing only block 0 share its 512 tokens and no more
    c, d = by_row[1], by_row[2]
    items, _ = build_items("mooncake", [c, d], seed=0)
    tc, td = _tokens(items[0].body), _tokens(items[1].body)
    common = next(i for i, (x, y) in enumerate(zip(tc, td, strict=False)) if x != y)
    assert 512 <= common < 1024


def test_cli_writes_a_replayable_workload(tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    rc = cli.main(["--from-trace", "azure-conv", str(AZURE_CONV), "--window", "0:30", "--rate-scale", "2",
                   "--out", str(out)])
    assert rc == 0
    items = load_workload(out)
    rows = read_trace("azure-conv", AZURE_CONV.read_text()).rows
    assert len(items) == sum(1 for r in rows if r.t < 30)
    assert items[-1].t < 15.0 and all(i.endpoint.startswith("/v1/") for i in items)
    assert json.loads(out.read_text().splitlines()[0])["trace"]["source"] == "azure-conv"


def test_cli_reports_bad_input(tmp_path: Path) -> None:
    out = tmp_path / "w.jsonl"
    assert cli.main(["--from-trace", "nope", str(AZURE_CODE), "--out", str(out)]) == 2
    assert cli.main(["--from-trace", "mooncake", str(AZURE_CODE), "--out", str(out)]) == 2
    assert cli.main(["--from-trace", "azure-code", str(AZURE_CODE), "--window", "99999:10", "--out", str(out)]) == 2
    assert not out.exists()
