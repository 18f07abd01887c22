"""The processes and measurements of one `specgate bench-overhead` run: backends, targets, the load generator."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from gateway.bench.kit.procs import free_port
from gateway.bench.overhead.procs import LoadGen, PeakRss, Proc, http_json, start, wait_http
from gateway.bench.overhead.stats import add_paired_deltas, aggregate, flat, summarize

PATHS = {"chat": "/v1/chat/completions", "completions": "/v1/completions"}
ALL_TARGETS = ("direct", "bare-proxy", "specgate", "litellm")


@dataclass
class Target:
    name: str
    url: str
    proc: Proc | None = None  # None: the backend itself (no proxy CPU to measure)


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
        self.builds: dict[str, str] = {}  # specgate target -> `specgate --version` under its environment

    # --- processes
    def start_backends(self) -> None:
        for role in ("baseline", "speculative"):
            port = free_port()
            proc = start(f"backend-{role}", ["-m", "gateway.bench.overhead.backend", "--port", str(port), "--role",
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
        self.builds[name] = build_of(env)
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
                proc = start("bare-proxy", ["-m", "gateway.bench.overhead.proxy", "--port", str(port),
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
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # importing it would fetch a price list
        try:
            import litellm  # noqa: F401
        except ImportError:
            self.notes.append("LiteLLM not installed: skipped (pip install 'litellm[proxy]' to include it)")
            return None
        port = free_port()
        config = self.log_dir / "litellm.yaml"
        config.write_text(
            "model_list:\n  - model_name: specgate-bench\n    litellm_params:\n      model: openai/specgate-bench\n"
            f"      api_base: {self.backends['baseline']}/v1\n      api_key: none\n"
            # a loopback benchmark: recent LiteLLM refuses to start without a master key unless told this
            "general_settings:\n  dangerously_permit_weak_or_unset_master_key: true\n")
        proc = start("litellm", ["-m", "litellm.proxy.proxy_cli", "--config", str(config), "--port", str(port),
                                 "--host", "127.0.0.1"], cpus=self.gw_cpus, log_dir=self.log_dir, nice=self.args.nice,
                     env={"LITELLM_LOCAL_MODEL_COST_MAP": "True"})  # its bundled price list: no fetch from GitHub
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


def build_of(env: dict[str, str]) -> str:
    """What `specgate --version` says under a target's environment: pure Python or compiled (a variant's
    PYTHONPATH may point at another build)."""
    try:
        out = subprocess.run([sys.executable, "-m", "gateway", "--version"], env={**os.environ, **env},
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"unknown ({type(exc).__name__})"
    return out.stdout.strip() or f"unknown (exit {out.returncode})"


def progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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
