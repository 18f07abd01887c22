"""Replay workloads through specgate in front of a running baseline + speculative pair (real vLLM or the emulator).

For each policy: start `python -m gateway serve` (fresh learner), replay a low-load phase (Poisson arrivals)
then a high-load phase (closed loop, c concurrent streams), read the gateway's /admin/state and /metrics and the
backends' spec-decode counters, stop the gateway. Optionally replay the low phase directly against each backend
first (reference latencies without the gateway). Everything goes to --out (flat, at most 8 files):
results.json, summary.md, requests.jsonl, logs.txt (+ what run_real.sh adds).

Stdlib + aiohttp (+ the gateway package itself for the workload reader and the streaming client).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp

from gateway.bench.kit.metrics import parse_text
from gateway.bench.overhead_stats import percentile
from gateway.bench.replay.client import Measured, prepare_body, replay, send_one
from gateway.bench.report.metrics import histogram_quantile
from gateway.vllm_metrics import parse_vllm_metrics
from gateway.workloads import WorkloadItem, load_workload

T0 = time.monotonic()


def log(msg: str) -> None:
    print(f"[{time.monotonic() - T0:7.1f}s] {msg}", flush=True)


# ---------------------------------------------------------------- workload preparation

def prompt_text(body: dict[str, Any]) -> str:
    if "messages" in body:
        return "".join(str(m.get("content") or "") for m in body["messages"])
    return str(body.get("prompt") or "")


def make_counter(tokenizer_path: str | None) -> Any:
    """Token counter for the served model (tokenizers, present on the GPU image), else chars/2 (pessimistic)."""
    if tokenizer_path and Path(tokenizer_path).is_file():
        try:
            from tokenizers import Tokenizer  # type: ignore[import-not-found]

            tk = Tokenizer.from_file(tokenizer_path)
            return lambda text: len(tk.encode(text).ids), "tokenizers"
        except Exception as exc:  # the filter falls back to a character bound
            log(f"tokenizer unavailable ({exc}); filtering by characters")
    return (lambda text: len(text) // 2), "chars/2"


def adapt(items: list[WorkloadItem], args: argparse.Namespace, counter: Any) -> tuple[list[WorkloadItem], int]:
    """Cap max_tokens, ignore EOS (dummy weights), drop structured-output fields unless kept, drop too-long prompts."""
    out, dropped = [], 0
    for item in items:
        body = dict(item.body)
        body["max_tokens"] = min(int(body.get("max_tokens") or args.max_tokens), args.max_tokens)
        body["ignore_eos"] = True
        if not args.keep_structured:
            for key in ("response_format", "guided_json", "guided_regex", "guided_choice", "guided_grammar",
                        "structured_outputs", "tools", "tool_choice"):
                body.pop(key, None)
        if counter(prompt_text(body)) + body["max_tokens"] + 64 > args.max_model_len:
            dropped += 1
            continue
        out.append(dataclasses.replace(item, body=body))
    return out, dropped


def with_nonce(items: list[WorkloadItem], nonce: str) -> list[WorkloadItem]:
    """A distinct prompt prefix per run, so vLLM's prefix cache never serves one policy's prompts to another."""
    out = []
    for item in items:
        body = dict(item.body)
        if "messages" in body:
            msgs = [dict(m) for m in body["messages"]]
            msgs[0]["content"] = f"[{nonce}] " + str(msgs[0].get("content") or "")
            body["messages"] = msgs
        else:
            body["prompt"] = f"[{nonce}] " + str(body.get("prompt") or "")
        out.append(dataclasses.replace(item, id=f"{nonce}-{item.id}", body=body))
    return out


def poisson_schedule(items: list[WorkloadItem], rate: float, duration: float, seed: int) -> list[WorkloadItem]:
    rng = random.Random(seed)
    t, out = 0.0, []
    for item in items:
        t += rng.expovariate(rate)
        if t > duration:
            break
        out.append(dataclasses.replace(item, t=t))
    return out


# ---------------------------------------------------------------- load generation

async def closed_loop(items: list[WorkloadItem], url: str, model: str, conc: int, timeout_s: float,
                      deadline: float) -> list[Measured]:
    queue: asyncio.Queue[WorkloadItem] = asyncio.Queue()
    for item in items:
        queue.put_nowait(item)
    results: list[Measured] = []
    connector = aiohttp.TCPConnector(limit=0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None)) as session:
        start = time.perf_counter()

        async def worker() -> None:
            while not queue.empty() and time.monotonic() < deadline:
                item = queue.get_nowait()
                now = time.perf_counter() - start
                out = Measured(item.id, item.kind, sent_at_s=now, lateness_s=0.0)
                results.append(await send_one(session, url, item, prepare_body(item, model), out, timeout_s))

        await asyncio.gather(*(worker() for _ in range(conc)))
    return results


async def open_loop(items: list[WorkloadItem], url: str, model: str, timeout_s: float) -> list[Measured]:
    return await replay(items, url, model, 1.0, timeout_s=timeout_s)


# ---------------------------------------------------------------- HTTP helpers (sync, stdlib)

def http_get(url: str, timeout: float = 5.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except Exception as exc:
        status = getattr(exc, "code", 0)
        return int(status or 0), str(exc)


def wait_ok(url: str, timeout_s: float) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if http_get(url, 2.0)[0] == 200:
            return True
        time.sleep(0.5)
    return False


def spec_counters(metrics_text: str) -> dict[str, float]:
    try:
        snap = parse_vllm_metrics(metrics_text)
    except ValueError:  # not an exposition (the server did not answer): count nothing
        snap = parse_vllm_metrics("")
    return {"drafts": snap.drafts, "draft_tokens": snap.draft_tokens, "accepted": snap.accepted_tokens,
            "generation_tokens": snap.generation_tokens}


def histogram(text: str, name: str) -> dict[str, Any]:
    """Sum over label sets of a Prometheus histogram: count, mean, and PromQL-style p50/p90/p99."""
    buckets: dict[float, float] = {}
    total = count = 0.0
    for n, labels, v in parse_text(text):
        if n == name + "_bucket":
            le = float(labels["le"])
            buckets[le] = buckets.get(le, 0.0) + v
        elif n == name + "_sum":
            total += v
        elif n == name + "_count":
            count += v
    out: dict[str, Any] = {"count": count, "mean_s": total / count if count else None}
    for q in (0.5, 0.9, 0.99):
        out[f"p{int(q * 100)}_s"] = histogram_quantile(q, sorted(buckets.items()))
    return out


# ---------------------------------------------------------------- summaries

def summarize(rows: list[Measured], wall_s: float) -> dict[str, Any]:
    ok = [r for r in rows if r.status == "200" and r.e2e_s is not None]
    e2e = [r.e2e_s for r in ok if r.e2e_s is not None]
    ttft = [r.ttft_s for r in ok if r.ttft_s is not None]
    tokens = sum(r.completion_tokens or 0 for r in ok)
    split: dict[str, int] = {}
    by_class: dict[str, dict[str, int]] = {}
    reasons: dict[str, int] = {}
    tps: dict[str, list[float]] = {}
    for r in ok:
        b = r.backend or "direct"
        split[b] = split.get(b, 0) + 1
        by_class.setdefault(r.cls or "?", {}).setdefault(b, 0)
        by_class[r.cls or "?"][b] += 1
        token = (r.reason or "").split(" ")[0] or "-"
        reasons[token] = reasons.get(token, 0) + 1
        if r.completion_tokens and r.engine_steps:
            tps.setdefault(b, []).append(r.completion_tokens / r.engine_steps)
    errors: dict[str, int] = {}
    for r in rows:
        if r.status != "200":
            errors[r.status] = errors.get(r.status, 0) + 1
    return {
        "n": len(rows), "ok": len(ok), "errors": errors,
        "error_sample": [r.error for r in rows if r.status != "200"][:3],
        "wall_s": wall_s, "tokens": tokens, "tok_per_s": tokens / wall_s if wall_s else None,
        "mean_e2e_s": statistics.mean(e2e) if e2e else None, "p50_e2e_s": percentile(e2e, 50),
        "p90_e2e_s": percentile(e2e, 90),
        "mean_ttft_s": statistics.mean(ttft) if ttft else None, "p90_ttft_s": percentile(ttft, 90),
        "mean_tpot_ms": statistics.mean([1000 * (r.e2e_s - r.ttft_s) / max((r.completion_tokens or 2) - 1, 1)
                                         for r in ok if r.ttft_s is not None and r.e2e_s is not None]) if ok else None,
        "split": split, "split_by_class": by_class, "reasons": reasons,
        "tokens_per_step": {b: statistics.mean(v) for b, v in tps.items()},
    }


def row_json(r: Measured, policy: str, phase: str) -> str:
    d = dataclasses.asdict(r)
    d.update(policy=policy, phase=phase)
    return json.dumps(d)


# ---------------------------------------------------------------- gateway process

def split_policy(spec: str) -> tuple[str, str | None]:
    """`adaptive@2` -> ("adaptive", "2"): the policy and the gateway's SPECGATE_RANDOM_SEED for this run."""
    policy, _, seed = spec.partition("@")
    return policy, (seed or None)


class Gateway:
    def __init__(self, args: argparse.Namespace, policy_spec: str, log_path: Path) -> None:
        self.url = f"http://127.0.0.1:{args.gateway_port}"
        policy, seed = split_policy(policy_spec)
        env = dict(os.environ)
        env.update({
            "SPECGATE_BASELINE_URLS": args.baseline_url, "SPECGATE_SPECULATIVE_URLS": args.speculative_url,
            "SPECGATE_POLICY": policy, "SPECGATE_PORT": str(args.gateway_port), "SPECGATE_HOST": "127.0.0.1",
            "SPECGATE_LOG_REQUESTS": "true", "SPECGATE_NUM_SPECULATIVE_TOKENS": str(args.num_speculative_tokens),
        })
        for kv in args.gateway_env:
            k, _, v = kv.partition("=")
            env[k] = v
        if seed is not None:  # after --gateway-env: the per-run seed wins
            env["SPECGATE_RANDOM_SEED"] = seed
        self.log_path = log_path
        self._log = open(log_path, "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([sys.executable, "-m", "gateway", "serve"], env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def ready(self, timeout_s: float) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            if http_get(self.url + "/ready", 2.0)[0] == 200:
                return True
            time.sleep(0.3)
        return False

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()
        return self.proc.returncode


# ---------------------------------------------------------------- main

def fmt(v: Any, scale: float = 1.0, nd: int = 3) -> str:
    return "-" if v is None else f"{v * scale:.{nd}f}"


def render(results: dict[str, Any]) -> str:
    lines = [f"# specgate on {results['meta'].get('label')} ({results['meta'].get('target')})", "",
             "| phase | target | n ok/err | mean e2e s | p90 e2e s | mean TTFT s | p90 TTFT s | TPOT ms | tok/s |"
             " split base/spec | tok/step spec | learned tok/step | overhead mean/p99 ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for run in results["runs"]:
        s = run["summary"]
        learned = run.get("learned_tokens_per_step")
        ov = run.get("overhead") or {}
        err = sum(s["errors"].values())
        split = f"{s['split'].get('baseline', 0)}/{s['split'].get('speculative', 0)}" if run["policy"] != "direct" \
            else "-"
        tps = s["tokens_per_step"].get("speculative", s["tokens_per_step"].get("direct"))
        lines.append(
            f"| {run['phase']} | {run['policy']}{'→' + run['direct_target'] if run.get('direct_target') else ''} | "
            f"{s['ok']}/{err} | {fmt(s['mean_e2e_s'])} | {fmt(s['p90_e2e_s'])} | {fmt(s['mean_ttft_s'])} | "
            f"{fmt(s['p90_ttft_s'])} | {fmt(s['mean_tpot_ms'], nd=2)} | {fmt(s['tok_per_s'], nd=0)} | {split} | "
            f"{fmt(tps, nd=2)} | {fmt(learned, nd=2)} | "
            f"{fmt(ov.get('mean_s'), 1000, 2)}/{fmt(ov.get('p99_s'), 1000, 2)} |")
    lines.append("")
    for run in results["runs"]:
        if split_policy(run["policy"])[0] in ("rules", "adaptive") and run["phase"] == "high":
            lines.append(f"- {run['policy']} split by class (cumulative low+high phases shown per phase): "
                         + json.dumps(run["summary"]["split_by_class"]))
            if run.get("learned_classes") is not None:
                lines.append(f"  learned per class: {json.dumps(run['learned_classes'])}")
    return "\n".join(lines) + "\n"


def extract_learned(state: dict[str, Any]) -> tuple[float | None, Any]:
    learner = state.get("learner") or {}
    tps = learner.get("backend_tokens_per_step")
    classes = learner.get("classes")
    if isinstance(classes, dict | list):
        slim: Any = classes
        if isinstance(classes, dict):
            slim = {k: {kk: vv for kk, vv in v.items() if "token" in kk or "accept" in kk or "weight" in kk
                        or kk in ("n", "count", "observations")} if isinstance(v, dict) else v
                    for k, v in classes.items()}
        classes = slim
    return (float(tps) if isinstance(tps, int | float) else None), classes


async def run_phase(kind: str, items: list[WorkloadItem], url: str, args: argparse.Namespace,
                    deadline: float) -> tuple[list[Measured], float]:
    t = time.monotonic()
    if kind == "low":
        rows = await asyncio.wait_for(open_loop(items, url, args.model, args.request_timeout_s),
                                      timeout=max(5.0, deadline - time.monotonic()))
    else:
        rows = await closed_loop(items, url, args.model, args.high_conc, args.request_timeout_s, deadline)
    return rows, time.monotonic() - t


def run_single(args: argparse.Namespace, low: list[WorkloadItem], warm: list[WorkloadItem],
               high: list[WorkloadItem], results: dict[str, Any], req_file: Any, save: Any, deadline: float) -> int:
    """One server alone on the GPU (no gateway): warm-up (discarded), then the low and high phases sent to it."""
    name, _, url = args.single.partition("=")
    if not wait_ok(url + "/health", 30):
        results["fatal"] = f"{name} {url} not healthy"
        save()
        return 1
    if warm:
        rows = asyncio.run(closed_loop(with_nonce(warm, f"warm-{name}"), url, args.model, len(warm),
                                       args.request_timeout_s, deadline))
        log(f"warm-up {name}: {[r.status for r in rows]}")
        results.setdefault("warmup", {})[name] = summarize(rows, 1.0)
    for phase, items in (("low", low), ("high", high)):
        if time.monotonic() > deadline:
            results.setdefault("skipped", []).append(f"{name}-{phase}")
            continue
        before = spec_counters(http_get(url + "/metrics")[1])
        rows, wall = asyncio.run(run_phase(phase, with_nonce(items, f"{name}-{phase}"), url, args, deadline))
        after = spec_counters(http_get(url + "/metrics")[1])
        for r in rows:
            req_file.write(row_json(r, "single", f"{phase}-{name}") + "\n")
        run: dict[str, Any] = {"policy": "single", "direct_target": name, "phase": phase,
                               "summary": summarize(rows, wall),
                               "vllm_spec_delta": {k: after[k] - before[k] for k in after}}
        d = run["vllm_spec_delta"]
        if d["drafts"]:
            run["vllm_mean_acceptance_length"] = 1 + d["accepted"] / d["drafts"]
        results["runs"].append(run)
        s = run["summary"]
        log(f"single {name} {phase}: ok {s['ok']}/{s['n']} mean e2e {fmt(s['mean_e2e_s'])} p90 {fmt(s['p90_e2e_s'])}"
            f" ttft p90 {fmt(s['p90_ttft_s'])} tok/step {s['tokens_per_step']} errors {s['errors']}")
        save()
    (args.out / f"vllm-{name}-metrics.txt").write_text(http_get(url + "/metrics")[1])
    req_file.close()
    results["meta"]["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    save()
    print(render(results))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--baseline-url", default="http://127.0.0.1:8001")
    p.add_argument("--speculative-url", default="http://127.0.0.1:8002")
    p.add_argument("--model", default="target")
    p.add_argument("--label", default="real-h200-ngram")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--policies", default="baseline,speculative,rules,adaptive")
    p.add_argument("--low-workload", default="mixed-low")
    p.add_argument("--high-workload", default="mixed-high")
    p.add_argument("--low-rate", type=float, default=1.5, help="Poisson arrivals per second in the low phase")
    p.add_argument("--low-duration", type=float, default=36.0)
    p.add_argument("--high-conc", type=int, default=48)
    p.add_argument("--high-n", type=int, default=240)
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--max-model-len", type=int, default=8192)
    p.add_argument("--tokenizer", default="/tmp/models/target/tokenizer.json")
    p.add_argument("--keep-structured", action="store_true", help="keep response_format/tools (off: dummy weights)")
    p.add_argument("--single", help="NAME=URL: one server alone, no gateway (its low and high phases sent to it)")
    p.add_argument("--direct", action="store_true", help="replay the low phase directly to each backend first")
    p.add_argument("--direct-duration", type=float, default=20.0)
    p.add_argument("--warmup", type=int, default=4, help="direct warm-up requests per backend")
    p.add_argument("--gateway-port", type=int, default=8000)
    p.add_argument("--gateway-env", action="append", default=[], help="extra KEY=VALUE for the gateway")
    p.add_argument("--num-speculative-tokens", type=int, default=4)
    p.add_argument("--configured-acceptance", type=float, default=None)
    p.add_argument("--budget-s", type=float, default=420.0, help="stop starting new work after this many seconds")
    p.add_argument("--request-timeout-s", type=float, default=120.0)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--meta", action="append", default=[], help="KEY=VALUE recorded in results.meta")
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget_s
    counter, counter_kind = make_counter(args.tokenizer)

    low_all, low_drop = adapt(load_workload(args.low_workload), args, counter)
    high_all, high_drop = adapt(load_workload(args.high_workload), args, counter)
    low = poisson_schedule(low_all, args.low_rate, args.low_duration, args.seed)
    high = high_all[: args.high_n]
    meta: dict[str, Any] = {
        "label": args.label, "target": f"{args.baseline_url} + {args.speculative_url}", "argv": sys.argv,
        "low": {"workload": args.low_workload, "rate": args.low_rate, "duration_s": args.low_duration, "n": len(low),
                "dropped_too_long": low_drop},
        "high": {"workload": args.high_workload, "conc": args.high_conc, "n": len(high), "dropped_too_long": high_drop},
        "max_tokens_cap": args.max_tokens, "ignore_eos": True, "structured_fields_kept": args.keep_structured,
        "token_counter": counter_kind, "configured_acceptance": args.configured_acceptance,
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    for kv in args.meta:
        k, _, v = kv.partition("=")
        meta[k] = v
    results: dict[str, Any] = {"meta": meta, "runs": []}
    req_file = open(args.out / "requests.jsonl", "w")  # noqa: SIM115
    logs: list[str] = []

    def save() -> None:
        (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))
        (args.out / "summary.md").write_text(render(results))

    if args.single:
        warm_items = high_all[-args.warmup:] if args.warmup else []
        return run_single(args, low, warm_items, high, results, req_file, save, deadline)
    for name, url in (("baseline", args.baseline_url), ("speculative", args.speculative_url)):
        if not wait_ok(url + "/health", 30):
            log(f"{name} {url} not healthy")
            results["fatal"] = f"{name} not healthy"
            save()
            return 1
    log(f"both backends healthy; low n={len(low)} (dropped {low_drop}), high n={len(high)} (dropped {high_drop})")

    # warm-up: first requests after a start pay for lazy initialisation
    warm = with_nonce(high_all[-args.warmup:], "warm") if args.warmup else []
    for name, url in (("baseline", args.baseline_url), ("speculative", args.speculative_url)):
        if warm:
            rows = asyncio.run(closed_loop(warm, url, args.model, len(warm), args.request_timeout_s, deadline))
            log(f"warm-up {name}: {[r.status for r in rows]} e2e {[round(r.e2e_s or 0, 2) for r in rows]}")
            results.setdefault("warmup", {})[name] = summarize(rows, 1.0)

    def counters(url: str) -> dict[str, float]:
        return spec_counters(http_get(url + "/metrics")[1])

    if args.direct:
        for name, url in (("baseline", args.baseline_url), ("speculative", args.speculative_url)):
            if time.monotonic() > deadline:
                break
            items = with_nonce([i for i in low if i.t <= args.direct_duration], f"direct-{name}")
            before = counters(url)
            rows, wall = asyncio.run(run_phase("low", items, url, args, deadline))
            after = counters(url)
            for r in rows:
                req_file.write(row_json(r, "direct", f"low-{name}") + "\n")
            run = {"policy": "direct", "direct_target": name, "phase": "low", "summary": summarize(rows, wall),
                   "vllm_spec_delta": {k: after[k] - before[k] for k in after}}
            results["runs"].append(run)
            log(f"direct {name} low: mean e2e {fmt(run['summary']['mean_e2e_s'])} ok {run['summary']['ok']}")
            save()

    for policy in args.policies.split(","):
        if time.monotonic() > deadline:
            log(f"budget spent: skipping {policy}")
            results.setdefault("skipped", []).append(policy)
            continue
        gw_log = Path(f"/tmp/specgate-gw-{args.label}-{policy.replace('@', '-seed')}.log")
        gw = Gateway(args, policy, gw_log)
        if not gw.ready(30):
            rc = gw.stop()
            tail = gw_log.read_text(errors="replace")[-3000:]
            log(f"gateway {policy} not ready (rc {rc}):\n{tail}")
            results.setdefault("failed", {})[policy] = tail
            save()
            continue
        try:
            for phase, items in (("low", low), ("high", high)):
                if time.monotonic() > deadline:
                    break
                before = counters(args.speculative_url)
                nonce = f"{policy.replace('@', 's')}-{phase}"
                rows, wall = asyncio.run(run_phase(phase, with_nonce(items, nonce), gw.url, args, deadline))
                after = counters(args.speculative_url)
                state_status, state_text = http_get(gw.url + "/admin/state")
                state = json.loads(state_text) if state_status == 200 else {}
                metrics_status, metrics_text = http_get(gw.url + "/metrics")
                if metrics_status != 200:  # the gateway is gone: record it, keep the phase's rows
                    log(f"gateway {policy} /metrics: {metrics_status} {metrics_text[:200]}")
                    metrics_text = ""
                learned, classes = extract_learned(state)
                for r in rows:
                    req_file.write(row_json(r, policy, phase) + "\n")
                run = {"policy": policy, "phase": phase, "summary": summarize(rows, wall),
                       "learned_tokens_per_step": learned, "learned_classes": classes,
                       "learned_timing": {k: (state.get("learner") or {}).get(k)
                                          for k in ("step_models", "prefill_s_per_token", "interference")},
                       "regimes": state.get("regimes"),
                       "overhead": histogram(metrics_text, "specgate_gateway_overhead_seconds"),
                       "vllm_spec_delta": {k: after[k] - before[k] for k in after}}
                d = run["vllm_spec_delta"]
                if d["drafts"]:
                    run["vllm_mean_acceptance_length"] = 1 + d["accepted"] / d["drafts"]
                if phase == "high":
                    run["admin_state"] = state
                results["runs"].append(run)
                s = run["summary"]
                log(f"{policy} {phase}: ok {s['ok']}/{s['n']} mean e2e {fmt(s['mean_e2e_s'])} p90 "
                    f"{fmt(s['p90_e2e_s'])} ttft {fmt(s['mean_ttft_s'])} split {s['split']} learned {fmt(learned)}"
                    f" errors {s['errors']} {s['error_sample'][:1]}")
                save()
        finally:
            rc = gw.stop()
            text = gw_log.read_text(errors="replace")
            logs.append(f"==== gateway {policy} (rc {rc}) first/last lines ====\n" + "\n".join(
                [*text.splitlines()[:5], "...", *text.splitlines()[-8:]]))
    req_file.close()
    for name, url in (("baseline", args.baseline_url), ("speculative", args.speculative_url)):
        (args.out / f"vllm-{name}-metrics.txt").write_text(http_get(url + "/metrics")[1])
    (args.out / "logs.txt").write_text("\n".join(logs) + "\n")
    results["meta"]["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results["meta"]["elapsed_s"] = time.monotonic() - T0
    save()
    print(render(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
