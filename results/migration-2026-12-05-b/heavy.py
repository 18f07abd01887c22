"""A migration-heavy run (issue 37's correctness check), every request through the official `openai` SDK.

A workload's requests at their arrival times (`--time-scale` wall seconds per trace second) through an in-process
gateway with `SPECGATE_MIGRATION=true` in front of an emulated `h200-ngram` pair, its regime switched by the router
with no dwell, any drain free and no band (`SPECGATE_REGIME_MIGRATION_DWELL_S=0`, `SPECGATE_REGIME_FREE_DRAIN_S=1000`,
`SPECGATE_REGIME_SWITCH_MARGIN=0`) and, on top, flipped every `--flip-s` seconds (`import_regimes` + the proxy's
check, as a peer's regime would be joined). Afterwards each request is sent again straight to the baseline server
(never moved) and compared; a third of the requests are sent non-streamed, a third streamed with usage asked
for, a third as the workload has them: text, finish_reason, usage (when the client gets it), one id per stream, one
finish_reason. Lost = an exception from the SDK (an HTTP error or a stream it cannot parse).

    python heavy.py [--workload bursty] [--limit 200] [--time-scale 0.5] [--flip-s 0.3] [--out heavy.json]
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import time
from typing import Any

import openai

from gateway.bench.kit.inproc import fast_settings, start_gateway
from gateway.emulator import EmulatedPair
from gateway.state import AppState
from gateway.workloads.items import WorkloadItem, load_workload

CHAT_ARGS = set(inspect.signature(openai.resources.chat.AsyncCompletions.create).parameters) - {"self"}
DONE_ARGS = set(inspect.signature(openai.resources.AsyncCompletions.create).parameters) - {"self"}


def _kwargs(item: WorkloadItem, stream: bool | None = None, variant: int = 2) -> dict[str, Any]:
    """The SDK's arguments for the item: as the workload has it (variant 2), non-streamed (0), or streamed with
    usage asked for (1); `stream` False: non-streamed whatever the variant."""
    known = CHAT_ARGS if item.endpoint.endswith("chat/completions") else DONE_ARGS
    body = dict(item.body)
    if variant == 0 or stream is False:
        body["stream"] = False
        body.pop("stream_options", None)
    elif variant == 1:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    args = {k: v for k, v in body.items() if k in known}
    extra = {k: v for k, v in body.items() if k not in known}
    return {**args, "extra_body": extra or None, "extra_headers": {"x-request-id": item.id}}


async def _ask(client: openai.AsyncOpenAI, item: WorkloadItem, stream: bool | None = None,
               variant: int = 2) -> dict[str, Any]:
    chat = item.endpoint.endswith("chat/completions")
    api: Any = client.chat.completions if chat else client.completions
    kw = _kwargs(item, stream, variant)
    out: dict[str, Any] = {"id": item.id, "stream": bool(kw.get("stream"))}
    if not kw.get("stream"):
        r = await api.create(**kw)
        out["texts"] = [(c.message.content if chat else c.text) or "" for c in r.choices]
        out["finishes"] = [c.finish_reason for c in r.choices]
        out["usage"] = None if r.usage is None else [r.usage.prompt_tokens, r.usage.completion_tokens]
        return out
    chunks = [c async for c in await api.create(**kw)]
    n = max((ch.index for c in chunks for ch in c.choices), default=0) + 1
    texts, finishes = [""] * n, [[] for _ in range(n)]  # type: list[str], list[list[str]]
    for c in chunks:
        for ch in c.choices:
            texts[ch.index] += (ch.delta.content if chat else ch.text) or ""
            if ch.finish_reason:
                finishes[ch.index].append(ch.finish_reason)
    out["texts"], out["ids"] = texts, len({c.id for c in chunks})
    out["finishes"] = [f[0] if len(f) == 1 else f for f in finishes]
    out["one_finish"] = all(len(f) == 1 for f in finishes)
    usage = chunks[-1].usage if chunks else None
    out["usage"] = None if usage is None else [usage.prompt_tokens, usage.completion_tokens]
    return out


async def main(args: argparse.Namespace) -> dict[str, Any]:
    items = load_workload(args.workload)[:args.limit]
    model = str(items[0].body.get("model", "specgate-emu"))
    async with EmulatedPair(profile="h200-ngram", time_scale=args.time_scale, model_name=model) as pair:
        pair.register_references({i.id: i.reference for i in items if i.reference is not None})
        gw = await start_gateway(fast_settings(
            baseline_urls=[pair.baseline_url], speculative_urls=[pair.speculative_url], policy="adaptive",
            migration=True, regime_migration_dwell_s=0.0, regime_free_drain_s=1000.0, regime_switch_margin=0.0))
        state = gw.app[AppState.key]
        migrator, router = state.proxy.migrator, state.router
        assert migrator is not None
        group = next(iter(router.regimes))
        client = openai.AsyncOpenAI(base_url=gw.url + "/v1", api_key="x", max_retries=0, timeout=600)
        t0 = time.monotonic()

        async def timed(k: int, item: WorkloadItem) -> dict[str, Any]:
            await asyncio.sleep(max(0.0, t0 + item.t * args.time_scale - time.monotonic()))
            try:
                return await _ask(client, item, variant=k % 3)
            except Exception as exc:  # lost: an HTTP error or a stream the SDK cannot parse
                return {"id": item.id, "lost": f"{type(exc).__name__}: {exc}"[:300]}

        runs = asyncio.gather(*(timed(k, i) for k, i in enumerate(items)))
        flips = 0
        while not runs.done():
            await asyncio.sleep(args.flip_s)
            role = "baseline" if router.regimes[group].role == "speculative" else "speculative"
            router.import_regimes({group: role})
            migrator.switched()
            flips += 1
        results = await runs
        state.metrics.flush()
        reg = state.metrics.registry
        moves = {r: reg.get_sample_value("specgate_migrations_total", {"reason": r}) or 0.0
                 for r in ("switch", "resume_on_leaving", "not_worth", "resume_failed")}
        direct = openai.AsyncOpenAI(base_url=pair.baseline_url + "/v1", api_key="x", max_retries=0, timeout=600)
        pair.set_time_scale(0.02)  # the never-moved answers, fast
        alone = [await _ask(direct, i, stream=False) for i in items]
        await client.close()
        await direct.close()
        await gw.runner.cleanup()
    bad = []
    for item, got, ref in zip(items, results, alone, strict=True):
        if "lost" in got:
            continue
        problems = []
        if got["texts"] != ref["texts"]:
            problems.append("text")
        if got["finishes"] != ref["finishes"]:
            problems.append("finish")
        if got["stream"] and (got["ids"] != 1 or not got["one_finish"]):
            problems.append("stream shape")
        if got["usage"] is not None and got["usage"] != ref["usage"]:
            problems.append("usage")
        if problems:
            bad.append({"id": item.id, "problems": problems, "stop": item.body.get("stop"), "got": got, "alone": ref})
    return {"workload": args.workload, "requests": len(items), "time_scale": args.time_scale, "flip_s": args.flip_s,
            "flips": flips, "migrations": moves,
            "lost": [r for r in results if "lost" in r], "mismatched": bad,
            "streams": sum(1 for r in results if r.get("stream")),
            "with_usage": sum(1 for r in results if r.get("usage") is not None)}


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--workload", default="bursty")
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--time-scale", type=float, default=0.5)
    p.add_argument("--flip-s", type=float, default=0.3)
    p.add_argument("--out", default="heavy.json")
    a = p.parse_args()
    doc = asyncio.run(main(a))
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    print(json.dumps({k: v for k, v in doc.items() if k not in ("mismatched", "lost")}),
          "lost", len(doc["lost"]), "mismatched", len(doc["mismatched"]))
