"""The faults result as Markdown."""

from __future__ import annotations

import os
import platform
from typing import Any

import psutil


def render_md(result: dict[str, Any]) -> str:
    lines = [f"# Fault injection and soak — {result['date']}", "",
             f"Machine: {result['machine']}  ", f"Command: `{result['command']}`  ", ""]
    if result["scenarios"]:
        lines += ["Gateway: `python -m gateway serve`, policy `baseline` (all traffic on the faulty backend), "
                  "first-byte and idle timeouts 1 s, eject after 3 consecutive failures, cooldown 2 s.", "",
                  "| scenario | fault | sent | completed | failed over | cut mid-stream | failed | client left "
                  "| ejections | gateway RSS MB (fault start → peak) |",
                  "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for s in result["scenarios"]:
        rss = (f"{s['gateway_rss_mb_at_fault_start']} → {s['gateway_rss_mb_peak']}"
               if "gateway_rss_mb_peak" in s else "")
        lines.append(f"| {s['scenario']} | {s['fault']} | {s['sent']} | {s['completed']} | {s['failed_over']} | "
                     f"{s['cut_mid_stream']} | {s['failed']} | {s['client_aborted']} | "
                     f"{s.get('gateway_ejections_total', '')} | {rss} |")
    if result["scenarios"]:
        lines += ["", "*failed over*: completed on the other backend after the first attempt failed (a subset of "
                  "*completed*). *cut mid-stream*: the response had started; it ended with an SSE error event and "
                  "a closed connection, as designed (no retry after the first byte). *failed*: lost although it "
                  "could have been retried.", ""]
    for s in result["scenarios"]:
        if "backend_saw_aborts" in s:
            lines += [f"Client disconnects: {s['client_aborted']} clients left early; the backend saw "
                      f"{s['backend_saw_aborts']} aborted requests.", ""]
        if s["failed_statuses"]:
            lines += [f"{s['scenario']}: failures by kind {s['failed_statuses']}", ""]
    if result.get("abort_latency"):
        lines += ["## Client disconnect → backend sees the abort", "",
                  "| when the client leaves | n | p50 ms | max ms | under 200 ms |", "|---|---:|---:|---:|---:|"]
        for case, a in result["abort_latency"].items():
            lines.append(f"| {case} | {a['n']} | {a['p50_ms']} | {a['max_ms']} | {a['under_200ms']} |")
        lines.append("")
    if result.get("hostile"):
        from gateway.bench.faults.hostile import render_md as render_hostile

        lines += render_hostile(result["hostile"])
    s = result.get("soak")
    if s:
        b, a = s["before"], s["after"]
        lines += [f"## Soak: {s['seconds']:.0f} s at concurrency {s['concurrency']} "
                  f"({s['requests_per_s']} req/s, 10% of clients leave early)", "",
                  f"Requests: sent {s['sent']}, completed {s['completed']}, client left {s['client_aborted']}, "
                  f"failed {s['failed']} {s['failed_statuses'] or ''}", "",
                  "| gateway process | before | after |", "|---|---:|---:|",
                  f"| RSS MB | {b['rss_mb']} | {a['rss_mb']} |",
                  f"| TCP connections | {b['tcp_connections']} | {a['tcp_connections']} |",
                  f"| established | {b['tcp_established']} | {a['tcp_established']} |",
                  f"| CLOSE_WAIT | {b['tcp_close_wait']} | {a['tcp_close_wait']} |",
                  f"| file descriptors | {b['fds']} | {a['fds']} |",
                  f"| threads | {b['threads']} | {a['threads']} |", "",
                  "RSS over the soak (MB): " + ", ".join(str(x["rss_mb"]) for x in s["samples"]), ""]
    return "\n".join(lines)


def machine() -> str:
    mem = psutil.virtual_memory().total / 2**30
    return (f"{platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, {mem:.0f} GiB, "
            f"{platform.system()} {platform.release()}, Python {platform.python_version()}")
