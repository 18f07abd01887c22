"""`specgate bench-overhead`: what the gateway costs, side by side with the backend directly and a bare proxy.

Starts two zero-delay vLLM-compatible backends (baseline and speculative roles), a bare ~60-line aiohttp
pass-through proxy (the floor), specgate itself (`python -m gateway serve`, default adaptive policy,
metrics and headers on) and LiteLLM's proxy when `litellm` is importable, then drives each with a
closed-loop load generator in its own process: non-streaming and streaming (64 chunks), concurrency
1, 16, 64, 256, repeated. Targets are measured back to back within each repeat.

Pinning (2+ CPUs): proxies and the gateway run on the last CPU, the load generator and the backends on
the others, so the gateway's CPU is its own and the client side is identical for every target.

    specgate bench-overhead                 # full run, ~10 minutes on 2 cores
    specgate bench-overhead --quick         # small counts, one repeat
    specgate bench-overhead --workers 2     # also 1 vs 2 gateway processes (SO_REUSEPORT)
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from gateway.bench import overhead_profile, overhead_report
from gateway.bench.kit.procs import free_port
from gateway.bench.overhead_procs import LoadGen, PeakRss, Proc, http_json, start, wait_http
from gateway.bench.overhead_stats import add_paired_deltas, aggregate, evaluate, flat, summarize

RESULTS_DIR = Path(__file__).parent / "results"
PATHS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}
ALL_TARGETS = ("direct", "bare-proxy", "specgate", "litellm")


@dataclass
class Target:
    name: str
    url: str
    proc: Proc | None = None  # None: the backend itself (no proxy CPU to measure)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="specgate bench-overhead", description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small counts, 1 repeat, short RSS tests")
    p.add_argument("--concurrency", default="1,16,64,256", help="comma-separated closed-loop concurrencies")
    p.add_argument("--modes", default="plain,stream", help="plain (non-streaming) and/or stream")
    p.add_argument("--requests", type=int, default=2000, help="measured requests per point at c >= 16")
    p.add_argument("--requests-c1", type=int, default=1000, help="measured requests per point at c = 1")
    p.add_argument("--warmup", type=int, default=200, help="unmeasured requests before each point")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--chunks", type=int, default=64, help="content chunks per streamed response")
    p.add_argument("--endpoint", choices=sorted(PATHS), default="chat")
    p.add_argument("--prompt-chars", type=int, default=0,
                   help="pad the prompt with prose to this many characters (the classifier reads it all)")
    p.add_argument("--include-usage", action="store_true",
                   help="clients ask for stream_options.include_usage (default: they don't; the gateway adds it "
                        "and strips the usage event, its costlier path)")
    p.add_argument("--targets", default="direct,bare-proxy,specgate,litellm",
                   help="subset of direct,bare-proxy,specgate,litellm (litellm only if importable)")
    p.add_argument("--open-streams", type=int, default=1000, help="concurrent open streams for the RSS test (0: skip)")
    p.add_argument("--open-stream-delay-s", type=float, default=0.1, help="backend delay between chunks then")
    p.add_argument("--long-requests", type=int, default=40000, help="requests for the long-run RSS test (0: skip)")
    p.add_argument("--workers", type=int, default=0, help="also compare 1 vs N gateway processes (0: skip)")
    p.add_argument("--profile", action="store_true", help="py-spy the gateway under load (needs py-spy)")
    p.add_argument("--profile-seconds", type=float, default=20.0)
    p.add_argument("--profile-concurrency", type=int, default=64, help="closed-loop concurrency while profiling")
    p.add_argument("--no-pin", action="store_true", help="do not pin processes to CPUs")
    p.add_argument("--nice", type=int, default=0,
                   help="niceness for every benchmark process (e.g. -5 as root on a shared, busy machine)")
    p.add_argument("--gateway-env", action="append", default=[], metavar="K=V",
                   help="extra environment for specgate (e.g. SPECGATE_LOG_REQUESTS=false)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:K=V[,K=V]",
                   help="an extra specgate target with more environment, e.g. nolog:SPECGATE_LOG_REQUESTS=false")
    p.add_argument("--fleet", type=int, default=0, metavar="N",
                   help="also a specgate target with N backends (N/2 pairs, each server's URL repeated): the cost of "
                        "routing over a fleet")
    p.add_argument("--out-dir", type=Path, default=RESULTS_DIR)
    p.add_argument("--tag", default="", help="suffix for the results file name")
    p.add_argument("--from-json", type=Path, metavar="FILE",
                   help="measure nothing: re-evaluate the targets of a results file, rewrite its .md, print it")
    args = p.parse_args(argv)
    if args.quick:
        args.requests, args.requests_c1, args.warmup, args.repeats = min(args.requests, 300), min(
            args.requests_c1, 100), min(args.warmup, 30), 1
        args.open_streams, args.long_requests = min(args.open_streams, 200), min(args.long_requests, 2000)
        args.open_stream_delay_s = min(args.open_stream_delay_s, 0.02)
        args.profile_seconds = min(args.profile_seconds, 5.0)
    return args


def machine_info() -> dict[str, Any]:
    model = platform.processor() or "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {"nproc": os.cpu_count(), "cpu_model": model, "python": platform.python_version(),
            "platform": platform.platform()}


def git_state() -> dict[str, Any]:
    """The commit measured and the gateway files that differed from it (others may be editing)."""
    root = Path(__file__).resolve().parents[2]

    def git(*cmd: str) -> str:
        try:
            return subprocess.run(["git", "-C", str(root), *cmd], capture_output=True, text=True,
                                  timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    dirty = [line.split(None, 1)[1] for line in git("status", "--porcelain", "--", "gateway").splitlines()
             if line.strip() and not line.startswith("??")]
    return {"commit": git("rev-parse", "--short", "HEAD"), "modified": dirty}


def uptime() -> str:
    load = os.getloadavg()
    return f"load average {load[0]:.2f}, {load[1]:.2f}, {load[2]:.2f}"


def cpu_plan(no_pin: bool) -> tuple[set[int] | None, set[int] | None, str]:
    cpus = sorted(os.sched_getaffinity(0))
    if no_pin or len(cpus) < 2:
        return None, None, "none (all processes share all CPUs)"
    gw, load = {cpus[-1]}, set(cpus[:-1])
    return gw, load, (f"gateway/proxy under test on CPU {cpus[-1]}; load generator and both backends on CPU(s) "
                      f"{','.join(map(str, sorted(load)))} (os.sched_setaffinity)")


BASE_PROMPTS = {"chat": "Summarise speculative decoding in two sentences.", "completions": "Speculative decoding is"}
PROSE = ("A draft model proposes several tokens and the target model verifies them in one forward pass; "
         "when most proposals are accepted the server emits more than one token per step, and when few are, "
         "the extra work only slows every request sharing the batch. ")


def prompt_text(base: str, chars: int) -> str:
    if chars <= len(base):
        return base
    filler = PROSE * (chars // len(PROSE) + 1)
    return (filler[: chars - len(base) - 1] + " " + base)[:chars]


def request_body(args: argparse.Namespace, stream: bool) -> str:
    body: dict[str, Any] = {"model": "specgate-bench", "max_tokens": args.chunks, "temperature": 0.0}
    if args.endpoint == "chat":
        content = prompt_text(BASE_PROMPTS["chat"], args.prompt_chars)
        body["messages"] = [{"role": "user", "content": content}]
    else:
        body["prompt"] = prompt_text(BASE_PROMPTS["completions"], args.prompt_chars)
    if stream:
        body["stream"] = True
        if args.include_usage:
            body["stream_options"] = {"include_usage": True}
    return orjson.dumps(body).decode()


class Bench:
    """Every process of one run; `close()` stops them all."""

    def __init__(self, args: argparse.Namespace, log_dir: Path) -> None:
        self.args, self.log_dir = args, log_dir
        self.gw_cpus, self.load_cpus, self.pinning = cpu_plan(args.no_pin)
        self.procs: list[Proc] = []
        self.backends: dict[str, str] = {}
        self.targets: list[Target] = []
        self.notes: list[str] = []
        self.loadgen: LoadGen | None = None
        self.sent: dict[str, int] = {}

    # --- processes
    def start_backends(self) -> None:
        for role in ("baseline", "speculative"):
            port = free_port()
            proc = start(f"backend-{role}", ["-m", "gateway.bench.overhead_backend", "--port", str(port), "--role",
                                             role, "--chunks", str(self.args.chunks)],
                         cpus=self.load_cpus, log_dir=self.log_dir, nice=self.args.nice)
            self.procs.append(proc)
            self.backends[role] = f"http://127.0.0.1:{port}"
        for proc, url in zip(self.procs[-2:], self.backends.values(), strict=True):
            wait_http(proc, url + "/health")

    def start_specgate(self, name: str, workers: int = 1, cpus: set[int] | None = None,
                       extra_env: list[str] | None = None, wait: bool = True) -> Target:
        port = free_port()
        env = {"SPECGATE_BASELINE_URLS": self.backends["baseline"],
               "SPECGATE_SPECULATIVE_URLS": self.backends["speculative"],
               "SPECGATE_HOST": "127.0.0.1", "SPECGATE_PORT": str(port), "SPECGATE_WORKERS": str(workers)}
        for item in [*self.args.gateway_env, *(extra_env or [])]:
            key, _, value = item.partition("=")
            env[key] = value
        proc = start(name, ["-m", "gateway", "serve"], cpus=cpus, env=env, log_dir=self.log_dir, nice=self.args.nice)
        self.procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        if not wait:
            return Target(name, url, proc)
        wait_http(proc, url + "/health")
        if workers > 1:
            time.sleep(1.0)  # let every worker bind before load arrives
        return Target(name, url, proc)

    def start_targets(self) -> None:
        wanted = [t.strip() for t in self.args.targets.split(",") if t.strip()]
        if self.args.variant or self.args.fleet:
            wanted.insert(wanted.index("specgate") + 1 if "specgate" in wanted else len(wanted), "variants")
        self.loadgen = LoadGen(self.load_cpus, self.log_dir, self.args.nice)
        for name in wanted:
            if name == "direct":
                self.targets.append(Target("direct", self.backends["baseline"]))
            elif name == "bare-proxy":
                port = free_port()
                proc = start("bare-proxy", ["-m", "gateway.bench.overhead_proxy", "--port", str(port),
                                            "--upstream", self.backends["baseline"]],
                             cpus=self.gw_cpus, log_dir=self.log_dir, nice=self.args.nice)
                self.procs.append(proc)
                self.targets.append(Target("bare-proxy", f"http://127.0.0.1:{port}", proc))
            elif name == "specgate":
                self.targets.append(self.start_specgate("specgate", cpus=self.gw_cpus, wait=False))
            elif name == "variants":
                for spec in self.args.variant:
                    vname, _, assignments = spec.partition(":")
                    self.targets.append(self.start_specgate(f"specgate-{vname}", cpus=self.gw_cpus,
                                                            extra_env=assignments.split(","), wait=False))
                if self.args.fleet:
                    pairs = max(self.args.fleet // 2, 1)
                    fleet = [f"SPECGATE_{role.upper()}_URLS=" + ",".join([self.backends[role]] * pairs)
                             for role in ("baseline", "speculative")]
                    self.targets.append(self.start_specgate(f"specgate-fleet{2 * pairs}", cpus=self.gw_cpus,
                                                            extra_env=fleet, wait=False))
            elif name == "litellm":
                target = self.start_litellm()
                if target is not None:
                    self.targets.append(target)
            else:
                raise SystemExit(f"unknown target {name!r}; choose from {', '.join(ALL_TARGETS)}")
        for t in self.targets:
            if t.proc is not None and t.name != "litellm":  # started together above, waited for here
                wait_http(t.proc, t.url + "/health")

    def start_litellm(self) -> Target | None:
        try:
            import litellm  # noqa: F401
        except ImportError:
            self.notes.append("LiteLLM not installed: skipped (pip install 'litellm[proxy]' to include it)")
            return None
        port = free_port()
        config = self.log_dir / "litellm.yaml"
        config.write_text(
            "model_list:\n  - model_name: specgate-bench\n    litellm_params:\n      model: openai/specgate-bench\n"
            f"      api_base: {self.backends['baseline']}/v1\n      api_key: none\n")
        proc = start("litellm", ["-m", "litellm.proxy.proxy_cli", "--config", str(config), "--port", str(port),
                                 "--host", "127.0.0.1"], cpus=self.gw_cpus, log_dir=self.log_dir, nice=self.args.nice)
        self.procs.append(proc)
        try:
            wait_http(proc, f"http://127.0.0.1:{port}/health/liveliness", timeout=90)
        except RuntimeError as exc:
            self.notes.append(f"LiteLLM failed to start, skipped: {str(exc).splitlines()[0]}")
            proc.stop()
            return None
        return Target("litellm", f"http://127.0.0.1:{port}", proc)

    def close(self) -> None:
        if self.loadgen is not None:
            self.loadgen.stop()
        for proc in reversed(self.procs):
            proc.stop()

    # --- measurement
    def job(self, target: Target, stream: bool, c: int, requests: int, warmup: int) -> dict[str, Any]:
        assert self.loadgen is not None
        body = request_body(self.args, stream)
        cpu0 = target.proc.cpu_s() if target.proc else None
        rss0 = target.proc.rss_mb() if target.proc else None
        result = self.loadgen.run({"url": target.url, "path": PATHS[self.args.endpoint], "body": body,
                                   "stream": stream, "concurrency": c, "requests": requests, "warmup": warmup})
        self.sent[target.name] = self.sent.get(target.name, 0) + requests + warmup
        cpu = target.proc.cpu_s() - cpu0 if target.proc and cpu0 is not None else None
        rss1 = target.proc.rss_mb() if target.proc else None
        return summarize(result, requests + warmup, cpu, rss0, rss1)

    def measure_points(self, targets: list[Target], concurrencies: list[int]) -> list[dict[str, Any]]:
        a = self.args
        points: list[dict[str, Any]] = []
        for mode in [m.strip() for m in a.modes.split(",") if m.strip()]:
            for c in concurrencies:
                n = a.requests_c1 if c == 1 else a.requests
                runs: dict[str, list[dict[str, Any]]] = {t.name: [] for t in targets}
                for r in range(a.repeats):
                    for t in targets[r % len(targets):] + targets[:r % len(targets)]:  # rotate the order
                        runs[t.name].append(self.job(t, mode == "stream", c, n, max(a.warmup, c)))
                        last = runs[t.name][-1]
                        progress(f"{mode:6} c={c:<4} repeat {r + 1}/{a.repeats} {t.name:<16} "
                                 f"{last['rps'] or 0:8.0f} req/s  p50 {last['p50_ms'] or 0:.2f} ms"
                                 f"  errors {last['errors']}")
                direct = runs.get("direct")
                for name, rs in runs.items():
                    if direct is not None:
                        add_paired_deltas(rs, direct)
                    points.append({"target": name, "mode": mode, "concurrency": c, "repeats": len(rs), "runs": rs,
                                   **aggregate(rs)})
        return points

    def set_backend_delay(self, delay: float) -> None:
        for url in self.backends.values():
            http_json(url + "/bench/config", {"chunk_delay_s": delay})

    def open_streams(self, target: Target) -> dict[str, Any]:
        assert self.loadgen is not None and target.proc is not None
        n = self.args.open_streams
        self.set_backend_delay(self.args.open_stream_delay_s)
        before = target.proc.rss_mb()
        try:
            with PeakRss(target.proc) as sampler:
                result = self.loadgen.run({"url": target.url, "path": PATHS[self.args.endpoint],
                                           "body": request_body(self.args, True), "stream": True, "hold": n})
        finally:
            self.set_backend_delay(0.0)
        self.sent[target.name] = self.sent.get(target.name, 0) + n
        return {"streams": n, "max_open": result["max_open"], "errors": result["errors"],
                "error_sample": result["error_sample"], "before_mb": before, "peak_mb": sampler.peak_mb,
                "after_mb": target.proc.rss_mb(), "wall_s": result["wall_s"]}

    def long_run(self, target: Target, concurrency: int = 64) -> dict[str, Any]:
        assert target.proc is not None
        total, batch = self.args.long_requests, max(200, self.args.long_requests // 20)
        series: list[tuple[int, float]] = [(0, target.proc.rss_mb())]
        done, errors, i = 0, 0, 0
        while done < total:
            n = min(batch, total - done)
            run = self.job(target, i % 2 == 1, concurrency, n, 0)
            done, errors, i = done + n, errors + run["errors"], i + 1
            series.append((done, target.proc.rss_mb()))
        ok, growth = flat([(float(n), mb) for n, mb in series])
        return {"requests": total, "concurrency": concurrency, "errors": errors, "series": series,
                "start_mb": series[0][1], "end_mb": series[-1][1], "growth_second_half_mb": growth, "flat": ok}


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def metrics_requests_total(url: str) -> float:
    text = http_json(url + "/metrics")
    return sum(float(line.rsplit(" ", 1)[1]) for line in str(text).splitlines()
               if line.startswith("specgate_requests_total{"))


def measure_workers(bench: Bench, n: int) -> dict[str, Any]:
    """Throughput of 1 vs n gateway processes, both unpinned (n processes need n CPUs); then checks that
    specgate_requests_total from the multi-process gateway counts every request sent to it."""
    targets = [bench.start_specgate("specgate-w1"), bench.start_specgate(f"specgate-w{n}", workers=n)]
    points = bench.measure_points(targets, [64])
    ratios, cpu = [], []
    for mode in ("plain", "stream"):
        rps = {p["target"]: p["median"]["rps"] for p in points if p["mode"] == mode}
        if rps.get("specgate-w1") and rps.get(f"specgate-w{n}"):
            ratios.append(rps[f"specgate-w{n}"] / rps["specgate-w1"])
        ms = {p["target"]: p["median"]["cpu_ms_per_req"] for p in points if p["mode"] == mode}
        cpu.append(f"{mode} {ms.get('specgate-w1') or 0:.2f} vs {ms.get(f'specgate-w{n}') or 0:.2f}")
    counted = metrics_requests_total(targets[1].url)
    expected = bench.sent.get(targets[1].name, 0)
    note = (f"specgate with 1 and with {n} worker processes, both unpinned (all CPUs shared with the load "
            f"generator and backends), c=64; scaling = min over modes of req/s ratio "
            f"({', '.join(f'{r:.2f}x' for r in ratios)}); CPU ms per request, 1 vs {n} workers: {'; '.join(cpu)}. "
            f"On 2 cores the load generator and backends need a core of their own, so a second worker has little "
            f"idle CPU to scale into. Learned state is per process (each worker learns "
            f"from the requests it serves). Metrics: specgate_requests_total over all workers = {counted:.0f}, "
            f"requests sent = {expected}.")
    for t in targets:
        assert t.proc is not None
        t.proc.stop()
    return {"n": n, "points": points, "scaling": min(ratios) if ratios else None, "metrics_counted": counted,
            "metrics_expected": expected, "metrics_ok": counted == expected, "note": note}


RATE_HZ = 250  # py-spy samples per second


def profile(bench: Bench, target: Target, out_dir: Path, stamp: str) -> dict[str, Any] | None:
    """py-spy `target` under c=64 load; the hot spots as shares of its samples and, with the requests served
    while recording, as µs of CPU per request (comparable across targets: `--profile` records the bare proxy
    too)."""
    assert target.proc is not None
    raw = bench.log_dir / f"profile-{target.name}.txt"
    seconds = bench.args.profile_seconds
    recorder = overhead_profile.start_record(target.proc.popen.pid, raw, seconds, RATE_HZ)
    if recorder is None:
        bench.notes.append("py-spy not found: no profile (pip install py-spy)")
        return None
    time.sleep(0.5)
    modes = [m.strip() for m in bench.args.modes.split(",") if m.strip()]
    streams = [False, True] if len(modes) != 1 else [modes[0] == "stream"]
    deadline = time.monotonic() + seconds
    i = served = 0
    while time.monotonic() < deadline and recorder.poll() is None:
        bench.job(target, streams[i % len(streams)], bench.args.profile_concurrency, 1000, 0)
        i += 1
        served += 1000
    output = recorder.communicate(timeout=60)[0].decode(errors="replace")
    if recorder.returncode != 0 or not raw.exists():
        bench.notes.append(f"py-spy failed: {output.strip()[-300:]}")
        return None
    spots = overhead_profile.hot_spots(raw.read_text(), us_per_sample=1e6 / RATE_HZ / max(served, 1))
    what = "plain and streaming alternating" if len(streams) == 2 else "streaming" if streams[0] else "plain"
    text = overhead_profile.summary_text(spots, f"py-spy record of {target.name} (pid tree {target.proc.popen.pid}), "
                                                f"{seconds:.0f}s under c={bench.args.profile_concurrency} load, "
                                                f"{what}, "
                                                f"{served} requests")
    (out_dir / f"overhead-{stamp}-profile-{target.name}.txt").write_text(text + "\n")
    return {"spots": spots, "text": text, "requests": served}


@contextlib.contextmanager
def running(args: argparse.Namespace) -> Iterator[Bench]:
    with tempfile.TemporaryDirectory(prefix="specgate-overhead-") as tmp:
        bench = Bench(args, Path(tmp))
        try:
            yield bench
        except Exception:
            for proc in bench.procs:
                tail = proc.log_tail(10)
                if tail:
                    progress(f"--- {proc.name} log tail\n{tail}")
            raise
        finally:
            bench.close()


def write_results(results: dict[str, Any], json_path: Path) -> None:
    results["targets_eval"] = evaluate(results["points"], results["rss"], results["workers"])
    json_path.write_bytes(orjson.dumps(results, option=orjson.OPT_INDENT_2))
    json_path.with_suffix(".md").write_text(overhead_report.markdown(results))
    overhead_report.print_rich(results)
    print(f"results: {json_path} and {json_path.with_suffix('.md')}")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.from_json:
        write_results(orjson.loads(args.from_json.read_bytes()), args.from_json)
        return 0
    now = dt.datetime.now()
    stamp = now.strftime("%Y-%m-%d") + (f"-{args.tag}" if args.tag else "")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    concurrencies = [int(c) for c in args.concurrency.split(",") if c.strip()]
    results: dict[str, Any] = {
        "date": now.isoformat(timespec="seconds"), "machine": machine_info(),
        "command": "specgate bench-overhead " + shlex.join(argv), "load": {"before": uptime()}, "git": git_state(),
    }
    with running(args) as bench:
        bench.start_backends()
        bench.start_targets()
        results["config"] = {"pinning": bench.pinning, "requests": args.requests, "requests_c1": args.requests_c1,
                             "warmup": f"max({args.warmup}, c)", "repeats": args.repeats, "chunks": args.chunks,
                             "endpoint": PATHS[args.endpoint], "include_usage": args.include_usage,
                             "prompt_chars": len(prompt_text(BASE_PROMPTS[args.endpoint], args.prompt_chars)),
                             "concurrency": concurrencies, "targets": [t.name for t in bench.targets],
                             "gateway_env": args.gateway_env, "nice": args.nice}
        bench.notes.append("specgate runs with its default settings (adaptive policy, metrics, headers, JSON access "
                           "log line per request written to a file) plus --gateway-env: "
                           + (", ".join(args.gateway_env) or "none"))
        results["points"] = bench.measure_points(bench.targets, concurrencies)
        proxied = [t for t in bench.targets if t.proc is not None]
        rss: dict[str, Any] = {"open_streams": {}, "long_run": {}}
        gateway = next((t for t in bench.targets if t.name == "specgate"), None)
        if args.long_requests and gateway is not None:
            rss["long_run"][gateway.name] = bench.long_run(gateway)
            progress(f"long run: {rss['long_run'][gateway.name]['series']}")
        if args.open_streams:
            for t in proxied:
                rss["open_streams"][t.name] = bench.open_streams(t)
                progress(f"open streams {t.name}: {rss['open_streams'][t.name]}")
        results["rss"] = rss
        results["profile"] = profile(bench, gateway, args.out_dir, stamp) if args.profile and gateway else None
        if args.profile and results["profile"] is not None:  # the others too, for µs per request side by side
            results["profiles"] = {t.name: profile(bench, t, args.out_dir, stamp) for t in proxied if t is not gateway}
        results["workers"] = measure_workers(bench, args.workers) if args.workers > 1 else None
        results["notes"] = bench.notes
    results["load"]["after"] = uptime()
    write_results(results, args.out_dir / f"overhead-{stamp}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
