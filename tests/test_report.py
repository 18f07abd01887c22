"""`specgate report` on bench results files, on a live gateway's /metrics, and on a Prometheus HTTP API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from gateway.bench.kit.metrics import parse_text
from gateway.bench.kit.procs import wait_ready
from gateway.bench.report.cli import main as report_main
from gateway.bench.report.cli import second_server_memory
from gateway.bench.report.data import from_results, pays_at, threshold
from gateway.bench.report.metrics import from_samples, histogram_quantile, prometheus_report
from gateway.bench.report.render import html_page, verdict_lines
from gateway.emulator import EmulatedPair
from gateway.settings import Settings
from gateway.workloads.generate import Arrival, generate


def _request(rid: str, cls: str, backend: str, e2e: float, tokens: int, steps: int, inflight: int) -> dict[str, Any]:
    return {"id": rid, "kind": cls, "backend": backend, "class": cls, "ttft_s": e2e / 10, "e2e_s": e2e,
            "completion_tokens": tokens, "engine_steps": steps, "status": "200", "sent_s": 0.0,
            "inflight_at_send": inflight}


def _doc(load: int, spec_factor: dict[str, float]) -> dict[str, Any]:
    """A results document: baseline, speculative and adaptive over the same 40 requests."""
    policies: dict[str, Any] = {}
    from gateway.bench.replay.run import policy_result

    for policy in ("baseline", "speculative", "adaptive"):
        records = []
        for i in range(40):
            cls = "structured" if i % 2 else "creative"
            backend = policy if policy != "adaptive" else ("speculative" if cls == "structured" else "baseline")
            e2e = 1.0 * (spec_factor[cls] if backend == "speculative" else 1.0)
            steps = 100 if backend == "baseline" else (30 if cls == "structured" else 95)
            records.append(_request(f"r{i}", cls, backend, e2e, 100, steps, load + i % 3))
        policies[policy] = policy_result([{"records": records, "wall_s": 1.0, "emulator": {}, "log": []}], 1.0)
    return {"profile": "h200-ngram", "workload": f"load-{load}", "policies": policies}


def test_threshold_semantics() -> None:
    assert threshold([(1, 2.0), (4, 1.5), (16, 0.8), (64, 0.5)]) == pytest.approx(4 + 12 * 0.5 / 0.7, abs=0.01)
    assert threshold([(1, 2.0), (4, 1.5)]) is None and pays_at([(1, 2.0), (4, 1.5)]) == "all"
    assert threshold([(1, 0.9), (4, 0.8)]) is None and pays_at([(1, 0.9)]) == "none"
    assert threshold([(1, 0.9), (2, 1.2), (8, 0.7)]) == pytest.approx(2 + 6 * 0.2 / 0.5, abs=0.01)


def test_report_from_bench_results(tmp_path: Path) -> None:
    low = _doc(0, {"structured": 0.5, "creative": 1.3})
    high = _doc(40, {"structured": 1.4, "creative": 1.8})
    data = from_results([low, high], second_server_memory("h200-draft", None))
    rows = {r.task_class: r for r in data.classes}
    assert rows["structured"].speedup == 2.0 and rows["creative"].speedup is not None
    assert rows["creative"].speedup < 1
    assert rows["structured"].tokens_per_step == round(100 / 30, 3)
    assert rows["structured"].routed == {"baseline": 0, "speculative": 20}
    assert rows["creative"].latency["baseline"]["p90"] == 1.0
    assert data.load is not None and len(data.load.points) == 2 and data.load.threshold is not None
    assert data.memory["second_server_gib"] > 10
    lines = verdict_lines(data)
    assert any("pays for: structured" in line for line in lines)
    assert any("stopped paying above" in line for line in lines)
    assert any("GiB" in line for line in lines)
    files = []
    for i, doc in enumerate((low, high)):
        files.append(tmp_path / f"r{i}.json")
        files[-1].write_text(json.dumps(doc))
    html = tmp_path / "report.html"
    assert report_main([str(f) for f in files] + ["--html", str(html), "--json", str(tmp_path / "r.json")]) == 0
    page = html.read_text()
    assert page.count("data:image/png;base64,") == 3 and "structured" in page
    assert json.loads((tmp_path / "r.json").read_text())["classes"]


def test_single_results_file_bins_by_inflight() -> None:
    doc = _doc(0, {"structured": 0.5, "creative": 1.3})
    data = from_results([doc], {"second_server_gib": None})
    assert data.load is not None and data.load.unit.startswith("requests in flight")
    assert [x for x, _ in data.load.points] == [0.0, 2.0]


def test_histogram_quantile() -> None:
    buckets = [(0.1, 0.0), (0.5, 5.0), (1.0, 10.0), (float("inf"), 10.0)]
    assert histogram_quantile(0.5, buckets) == 0.5
    assert histogram_quantile(0.25, buckets) == 0.1 + 0.4 * 0.5
    assert histogram_quantile(0.5, []) is None


async def _start_gateway(pair: EmulatedPair) -> tuple[web.AppRunner, str]:
    settings = Settings(baseline_urls=[pair.baseline_url], speculative_urls=[pair.speculative_url], policy="rules",
                        health_interval_s=0.1, scrape_interval_s=0.2, log_requests=False)
    runner = web.AppRunner(create_app(settings, registry=CollectorRegistry()), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    await wait_ready(url, 10.0)
    return runner, url


async def _traffic(url: str, items: list[Any]) -> list[str]:
    classes = []
    async with aiohttp.ClientSession() as session:
        async def one(item: Any) -> None:
            body = {**item.body, "model": "specgate-emu", "max_tokens": 64, "stream": True,
                    "stream_options": {"include_usage": True}}
            async with session.post(url + item.endpoint, json=body, headers={"x-request-id": item.id}) as resp:
                assert resp.status == 200
                classes.append(resp.headers["x-specgate-class"])
                await resp.read()

        await asyncio.gather(*(one(i) for i in items))
    return classes


async def test_report_on_live_gateway_metrics(tmp_path: Path) -> None:
    async with EmulatedPair(profile="h200-ngram", time_scale=0.1) as pair:
        items = generate(10, "sql=1,code_edit=1,chat=1", Arrival(rate=50.0), seed=2)
        pair.register_references({i.id: i.reference for i in items if i.reference})
        runner, url = await _start_gateway(pair)
        try:
            classes = await _traffic(url, items)
            async with aiohttp.ClientSession() as session, session.get(url + "/metrics") as resp:
                text = await resp.text()
            html = tmp_path / "live.html"
            rc = await asyncio.to_thread(report_main, [url + "/metrics", "--html", str(html), "--profile",
                                                       "h200-ngram"])
        finally:
            await runner.cleanup()
    assert rc == 0 and "data:image/png" in html.read_text()
    data = from_samples(parse_text(text), "live", {"second_server_gib": None})
    rows = {r.task_class: r for r in data.classes}
    assert set(classes) <= set(rows)
    assert sum(r.requests for r in data.classes) == len(classes)
    structured = rows["structured"]
    assert structured.routed["speculative"] > 0  # `rules` sends structured requests to speculative
    assert structured.latency["speculative"]["p50"] is not None
    assert data.load is not None and "single scrape" in data.load.note
    assert html_page(data).startswith("<!doctype html>")


async def test_report_from_prometheus_api() -> None:
    """A Prometheus HTTP API (served on 127.0.0.1) answering the report's queries."""
    seen: list[str] = []

    def vector(metric: dict[str, str], value: float) -> dict[str, Any]:
        return {"metric": metric, "value": [0, str(value)]}

    async def query(request: web.Request) -> web.Response:
        q = request.query["query"]
        seen.append(q)
        result: list[dict[str, Any]] = []
        if q.startswith("sum by (role, class) (specgate_requests_total)"):
            result = [vector({"role": "baseline", "class": "chat"}, 30),
                      vector({"role": "speculative", "class": "chat"}, 10)]
        elif "specgate_time_per_output_token_seconds_sum" in q:
            result = [vector({"role": "baseline", "class": "chat"}, 3.0),
                      vector({"role": "speculative", "class": "chat"}, 0.5)]
        elif "specgate_time_per_output_token_seconds_count" in q:
            result = [vector({"role": "baseline", "class": "chat"}, 600),
                      vector({"role": "speculative", "class": "chat"}, 200)]
        return web.json_response({"status": "success", "data": {"resultType": "vector", "result": result}})

    async def query_range(request: web.Request) -> web.Response:
        q = request.query["query"]
        if q.startswith("sum(specgate_inflight"):
            series: list[dict[str, Any]]
            series = [{"metric": {}, "values": [[t, str(v)] for t, v in ((1, 1), (2, 6), (3, 20))]}]
        else:
            series = [{"metric": {"role": "baseline"}, "values": [[1, "0.005"], [2, "0.005"], [3, "0.006"]]},
                      {"metric": {"role": "speculative"}, "values": [[1, "0.0025"], [2, "0.004"], [3, "0.009"]]}]
        return web.json_response({"status": "success", "data": {"resultType": "matrix", "result": series}})

    app = web.Application()
    app.router.add_get("/api/v1/query", query)
    app.router.add_get("/api/v1/query_range", query_range)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        data = await prometheus_report(f"http://127.0.0.1:{runner.addresses[0][1]}", {"second_server_gib": 60.0})
    finally:
        await runner.cleanup()
    row = data.classes[0]
    assert row.task_class == "chat" and row.speedup == round((3.0 / 600) / (0.5 / 200), 3)
    assert row.routed == {"baseline": 30, "speculative": 10}
    assert data.load is not None and data.load.points == [(0.0, 2.0), (4.0, 1.25), (16.0, 0.667)]
    assert data.load.threshold is not None and 4 < data.load.threshold < 16
    assert any("histogram" not in q for q in seen)
