"""`specgate report SOURCE... [--html FILE]`: is speculative decoding worth it, per task class?

SOURCE is one or more `specgate bench` results files (several files = several load levels), a live
gateway's metrics URL (`http://host:8000/metrics`) or a Prometheus URL (`--prometheus http://host:9090`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from gateway.bench.kit.metrics import parse_text
from gateway.bench.replay.display import make_console
from gateway.bench.report.data import ReportData, from_results
from gateway.bench.report.metrics import from_samples, prometheus_report
from gateway.bench.report.render import html_page, print_report

GIB = 1024.0**3


def second_server_memory(profile_name: str | None, override_gib: float | None) -> dict[str, Any]:
    """GPU memory the speculative server adds: its copy of the target, the draft model, and its KV cache."""
    if override_gib is not None:
        return {"second_server_gib": override_gib, "detail": "given with --second-server-gib"}
    if not profile_name:
        return {"second_server_gib": None, "detail": "unknown: pass --profile or --second-server-gib"}
    try:
        from gateway.emulator.profiles import get_profile

        p = get_profile(profile_name)
    except (ImportError, ValueError) as exc:
        return {"second_server_gib": None, "detail": str(exc)}
    weights = p.target.weight_bytes + (p.draft.weight_bytes if p.draft else 0.0)
    kv_per_token = p.target.kv_bytes_per_token + (p.draft.kv_bytes_per_token if p.draft else 0.0)
    kv = p.speculative_kv_blocks * p.block_size * kv_per_token
    draft = f" + {p.draft.name} draft" if p.draft else " (n-gram drafter: no draft weights)"
    return {
        "second_server_gib": round((weights + kv) / GIB, 1),
        "weights_gib": round(weights / GIB, 1),
        "kv_cache_gib": round(kv / GIB, 1),
        "detail": f"profile {p.name}: {p.target.name} weights{draft} {weights / GIB:.1f} GiB + KV cache "
                  f"{kv / GIB:.1f} GiB on {p.gpu.name}",
    }


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="specgate report", description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("sources", nargs="*", help="bench results files, or a gateway /metrics URL")
    p.add_argument("--prometheus", help="Prometheus base URL (e.g. http://127.0.0.1:9090)")
    p.add_argument("--window", type=float, default=3600.0, help="Prometheus: seconds of history for the load curve")
    p.add_argument("--html", type=Path, help="write an HTML page with embedded plots")
    p.add_argument("--json", type=Path, help="write the report data as JSON")
    p.add_argument("--profile", help="profile whose constants give the second server's GPU memory")
    p.add_argument("--second-server-gib", type=float, help="GPU memory of the speculative server, if known")
    return p


async def _fetch(url: str) -> str:
    import aiohttp

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=15)) as session, session.get(url) as resp:
        resp.raise_for_status()
        return await resp.text()


def build(args: argparse.Namespace) -> ReportData:
    if args.prometheus:
        memory = second_server_memory(args.profile, args.second_server_gib)
        return asyncio.run(prometheus_report(args.prometheus, memory, window_s=args.window))
    if not args.sources:
        raise ValueError("give bench results files, a /metrics URL or --prometheus URL")
    urls = [s for s in args.sources if s.startswith(("http://", "https://"))]
    if urls:
        if len(args.sources) > 1:
            raise ValueError("give one /metrics URL at a time")
        text = asyncio.run(_fetch(urls[0]))
        memory = second_server_memory(args.profile, args.second_server_gib)
        return from_samples(parse_text(text), urls[0], memory)
    docs = [json.loads(Path(s).read_text()) for s in args.sources]
    profile = args.profile or docs[0].get("profile")
    return from_results(docs, second_server_memory(profile, args.second_server_gib))


def _as_json(data: ReportData) -> dict[str, Any]:
    from dataclasses import asdict

    return asdict(data)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    console = make_console()
    try:
        data = build(args)
    except (ValueError, OSError, KeyError, json.JSONDecodeError, RuntimeError) as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 2
    except Exception as exc:  # network errors from aiohttp: report them, not a traceback
        console.print(f"[red]error:[/red] {type(exc).__name__}: {exc}")
        return 2
    print_report(data, console)
    if args.html:
        args.html.parent.mkdir(parents=True, exist_ok=True)
        args.html.write_text(html_page(data), encoding="utf-8")
        console.print(f"HTML report: {args.html}")
    if args.json:
        args.json.write_text(json.dumps(_as_json(data), indent=1))
    return 0
