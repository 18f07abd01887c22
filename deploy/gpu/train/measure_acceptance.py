"""Per task class acceptance of a running vLLM server (issue 39, step 3): one segment per (class, mode).

    python deploy/gpu/train/measure_acceptance.py --prompts DATA/prompts.jsonl --url http://127.0.0.1:8002 \
        --label draft --out $OUT [--conc 8] [--budget-s 120]

Each segment sends its held-out prompts (tasks.py: greedy, or sampled at T in [0.8, 1.2]) to /v1/completions,
streaming with `continuous_usage_stats`, at most --conc at a time, and reads the server's own counters
(`vllm:spec_decode_num_drafts_total`, `..._num_draft_tokens_total`, `..._num_accepted_tokens_total`, the
per-position counts, `vllm:generation_tokens_total`) before and after, so the segment's deltas give:
- acceptance rate = accepted / draft tokens;
- mean acceptance length = 1 + accepted / drafts (vLLM's, over drafting steps only);
- tokens per step = generated / (generated - accepted) (every step, drafting or not: what a router sees);
- e2e: mean/p50 end-to-end and TTFT seconds, output tokens/s of the segment, tokens per streamed chunk.
Segments run one after another (the counters are per server). Adds `{label: {...}}` to OUT/results.json and
the generated texts to OUT/requests.jsonl (compare_emulator.py replays them). Stdlib + aiohttp.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import time
import urllib.request
from pathlib import Path
from typing import Any

COUNTERS = {"drafts": "vllm:spec_decode_num_drafts_total", "draft_tokens": "vllm:spec_decode_num_draft_tokens_total",
            "accepted": "vllm:spec_decode_num_accepted_tokens_total", "generated": "vllm:generation_tokens_total",
            "prompt_tokens": "vllm:prompt_tokens_total"}
PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos_total"
_LINE = re.compile(r"^([A-Za-z_:][\w:]*)(\{[^}]*\})?\s+(\S+)")
_POS = re.compile(r'position="(\d+)"')


def parse_counters(text: str) -> dict[str, float]:
    """Sums over label sets (engines) of the counters above; `pos<k>` for the per-position accepted counts."""
    out = dict.fromkeys(COUNTERS, 0.0)
    names = {v: k for k, v in COUNTERS.items()}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        name, labels, value = m.groups()
        if name in names:
            out[names[name]] += float(value)
        elif name == PER_POS and (pm := _POS.search(labels or "")):
            out[f"pos{pm.group(1)}"] = out.get(f"pos{pm.group(1)}", 0.0) + float(value)
    return out


def read_counters(url: str) -> dict[str, float]:
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        return parse_counters(r.read().decode())


def derive(delta: dict[str, float]) -> dict[str, Any]:
    """Acceptance figures from counter deltas (None where nothing was drafted)."""
    d, dt, a, g = delta["drafts"], delta["draft_tokens"], delta["accepted"], delta["generated"]
    out: dict[str, Any] = {"acceptance_rate": a / dt if dt else None,
                           "mean_acceptance_length": 1 + a / d if d else None,
                           "tokens_per_step": g / (g - a) if g > a else None}
    pos = sorted((int(k[3:]), v) for k, v in delta.items() if k.startswith("pos"))
    if d and pos:
        out["per_position_acceptance"] = [round(v / d, 4) for _, v in pos]
    return out


async def one(session: Any, url: str, model: str, pr: dict[str, Any], label: str, seed: int) -> dict[str, Any]:
    body = {"model": model, "prompt": pr["prompt"], "max_tokens": pr["max_tokens"], "temperature": pr["temperature"],
            "stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
    if pr["temperature"] > 0:
        body["seed"] = seed
    row: dict[str, Any] = {"id": pr["id"], "cls": pr["cls"], "mode": pr["mode"], "label": label, "text": "",
                           "chunks": 0, "tokens": 0, "finish_reason": None, "ttft": None}
    t0 = time.perf_counter()
    async with session.post(url + "/v1/completions", json=body, headers={"x-request-id": f"{label}-{pr['id']}"}) as r:
        if r.status != 200:
            row["error"] = f"{r.status} {(await r.text())[:200]}"
            return row
        async for raw in r.content:
            line = raw.strip()
            if not line.startswith(b"data: ") or line == b"data: [DONE]":
                continue
            ev = json.loads(line[6:])
            if ev.get("usage"):
                row["tokens"] = ev["usage"]["completion_tokens"]
            for ch in ev.get("choices") or []:
                if row["ttft"] is None:
                    row["ttft"] = time.perf_counter() - t0
                row["chunks"] += 1
                row["text"] += ch.get("text") or ""
                row["finish_reason"] = ch.get("finish_reason") or row["finish_reason"]
    row["e2e"] = time.perf_counter() - t0
    return row


async def send_all(url: str, model: str, prompts: list[dict[str, Any]], label: str, conc: int,
                   timeout_s: float) -> tuple[list[dict[str, Any]], float]:
    import aiohttp

    queue = list(enumerate(prompts))
    rows: list[dict[str, Any]] = []
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout_s)) as s:
        async def worker() -> None:
            while queue:
                i, pr = queue.pop(0)
                try:
                    rows.append(await one(s, url, model, pr, label, seed=1000 + i))
                except (aiohttp.ClientError, TimeoutError) as e:
                    rows.append({"id": pr["id"], "cls": pr["cls"], "mode": pr["mode"], "label": label,
                                 "error": repr(e)[:200]})
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(conc)))
        return rows, time.perf_counter() - t0


def segment_summary(rows: list[dict[str, Any]], wall: float, delta: dict[str, float]) -> dict[str, Any]:
    ok = [r for r in rows if "error" not in r]
    out: dict[str, Any] = {"n": len(rows), "errors": len(rows) - len(ok), "wall_s": round(wall, 3),
                           "counters": {k: round(v, 1) for k, v in delta.items()}, **derive(delta)}
    if ok:
        e2e = sorted(r["e2e"] for r in ok)
        toks = sum(r["tokens"] for r in ok)
        out.update(mean_e2e_s=statistics.mean(e2e), p50_e2e_s=e2e[len(e2e) // 2],
                   mean_ttft_s=statistics.mean(r["ttft"] or 0.0 for r in ok), output_tokens=toks,
                   output_tok_per_s=toks / wall if wall else None,
                   tokens_per_chunk=toks / max(sum(r["chunks"] for r in ok), 1),
                   finished_stop=sum(r["finish_reason"] == "stop" for r in ok))
    return out


def segments(prompts: list[dict[str, Any]], classes: list[str] | None, modes: list[str],
             per_class: int) -> list[tuple[str, str, list[dict[str, Any]]]]:
    order = list(dict.fromkeys(p["cls"] for p in prompts))
    out = []
    for cls in classes or order:
        for mode in modes:
            sel = [p for p in prompts if p["cls"] == cls and p["mode"] == mode]
            out.append((cls, mode, sel[:per_class] if per_class else sel))
    return [s for s in out if s[2]]


def run(args: argparse.Namespace, prompts: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    deadline = time.monotonic() + args.budget_s
    result: dict[str, Any] = {"url": args.url, "conc": args.conc, "segments": {}, "skipped": [],
                              "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    all_rows: list[dict[str, Any]] = []
    if args.warmup:  # first requests after a start compile new shapes: sent, not counted
        asyncio.run(send_all(args.url, args.model, prompts[: args.warmup], args.label + "-warm", args.conc, 120))
    for cls, mode, sel in segments(prompts, args.classes, args.modes, args.per_class):
        if time.monotonic() > deadline:
            result["skipped"].append(f"{cls}/{mode}")
            continue
        before = read_counters(args.url)
        rows, wall = asyncio.run(send_all(args.url, args.model, sel, args.label, args.conc, args.timeout_s))
        after = read_counters(args.url)
        delta = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
        result["segments"][f"{cls}/{mode}"] = seg = segment_summary(rows, wall, delta)
        print(json.dumps({"label": args.label, "segment": f"{cls}/{mode}",
                          **{k: seg.get(k) for k in ("n", "errors", "acceptance_rate", "mean_acceptance_length",
                                                     "tokens_per_step", "mean_e2e_s", "output_tok_per_s")}}),
              flush=True)
        all_rows += rows
    return result, all_rows


def merge_into(path: Path, label: str, result: dict[str, Any], meta: dict[str, str]) -> None:
    """OUT/results.json holds one entry per server label (re-measuring a label replaces it)."""
    data = json.loads(path.read_text()) if path.exists() else {"meta": {}, "servers": {}}
    data["meta"].update(meta)
    data["servers"][label] = result
    path.write_text(json.dumps(data, indent=1) + "\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=Path, required=True)
    p.add_argument("--url", required=True)
    p.add_argument("--label", required=True, help="the server's name: baseline, draft, ngram, ...")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--model", default="target")
    p.add_argument("--conc", type=int, default=8)
    p.add_argument("--per-class", type=int, default=0, help="at most this many prompts per segment (0: all)")
    p.add_argument("--classes", type=lambda s: s.split(","), default=None)
    p.add_argument("--modes", type=lambda s: s.split(","), default=["greedy", "sampled"])
    p.add_argument("--warmup", type=int, default=8)
    p.add_argument("--budget-s", type=float, default=300.0, help="start no segment after this")
    p.add_argument("--timeout-s", type=float, default=120.0)
    p.add_argument("--meta", action="append", default=[], help="KEY=VALUE into results.json's meta")
    args = p.parse_args(argv)
    prompts = [json.loads(line) for line in args.prompts.read_text().splitlines() if line.strip()]
    result, rows = run(args, prompts)
    args.out.mkdir(parents=True, exist_ok=True)
    merge_into(args.out / "results.json", args.label, result, dict(kv.partition("=")[::2] for kv in args.meta))
    with (args.out / "requests.jsonl").open("a", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
