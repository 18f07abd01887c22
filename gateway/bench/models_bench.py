"""A fleet serving two models (emulated servers with different model names) with traffic for both, and for a
model nobody serves, through the gateway: how many requests of each model each server received, how many went
to a server that does not serve their model (the emulator answers any name, as a misrouted request to a real
vLLM would get its 404: so the count is read from the emulator's own records, by `x-request-id`), and what the
unknown model got.

    python -m gateway.bench.models_bench --workload W.jsonl --layout baseline,speculative,baseline,speculative \\
        --models alpha,alpha,beta,beta --adapters beta=beta-sql --unknown-every 25 --out models.json

Each item of the workload asks for the fleet's models in turn (base models and adapters alike); every
`--unknown-every`-th asks for `no-such-model` instead. The gateway (`python -m gateway serve`, policy adaptive)
is sent traffic once its `/v1/models` lists every served model (its first round of `/v1/models` reads).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from gateway.bench.kit.procs import fetch_text, gateway_process
from gateway.bench.replay.client import replay
from gateway.emulator import EmulatedFleet
from gateway.workloads.items import WorkloadItem, load_workload

UNKNOWN = "no-such-model"


def assign_models(items: list[WorkloadItem], models: list[str], unknown_every: int) -> dict[str, str]:
    """Item id -> the model it asks for: `models` in turn, `UNKNOWN` for every `unknown_every`-th item."""
    out, k = {}, 0
    for i, item in enumerate(items):
        if unknown_every > 0 and (i + 1) % unknown_every == 0:
            out[item.id] = UNKNOWN
        else:
            out[item.id] = models[k % len(models)]
            k += 1
    return out


def tally(asked: dict[str, str], statuses: dict[str, tuple[str, str | None]], served_by: dict[str, str],
          serves: dict[str, set[str]], server_errors: dict[str, int]) -> dict[str, Any]:
    """The counts: per server, requests by asked model; misrouted (served by a server that does not serve the
    model, or answered with an error by a server: the emulator's 404 for a model it does not serve); per model,
    answers by status; the unknown model's answers."""
    per_server: dict[str, Counter[str]] = {name: Counter() for name in serves}
    misrouted = []
    for rid, instance in served_by.items():
        model = asked.get(rid)
        if model is None:
            continue
        per_server[instance][model] += 1
        if model not in serves[instance]:
            misrouted.append((rid, model, instance))
    by_model: dict[str, Counter[str]] = {}
    for rid, model in asked.items():
        status, error = statuses.get(rid, ("missing", None))
        key = "404 model_not_found" if status == "404" and error and "model_not_found" in error else status
        by_model.setdefault(model, Counter())[key] += 1
    return {"per_server": {n: dict(sorted(c.items())) for n, c in per_server.items()},
            "serves": {n: sorted(s) for n, s in serves.items()},
            "misrouted": len(misrouted) + sum(server_errors.values()), "misrouted_examples": misrouted[:10],
            "server_errors": dict(server_errors),
            "by_model": {m: dict(sorted(c.items())) for m, c in sorted(by_model.items())},
            "unknown_reached_a_server": sum(1 for rid in served_by if asked.get(rid) == UNKNOWN)}


async def _listed(url: str, want: set[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            listed = {m["id"] for m in orjson.loads(await fetch_text(url + "/v1/models"))["data"]}
        except Exception:  # not up yet, or not JSON yet: poll again
            listed = set()
        if want <= listed:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the gateway listed {sorted(listed)}, not {sorted(want)}, within {timeout_s:g} s")
        await asyncio.sleep(0.1)


async def run(items: list[WorkloadItem], layout: list[str], models: list[str], adapters: dict[str, list[str]],
              unknown_every: int, time_scale: float, log_dir: Path) -> dict[str, Any]:
    async with EmulatedFleet(layout, time_scale=time_scale, models=models, adapters=adapters) as fleet:
        fleet.register_references({i.id: i.reference for i in items if i.reference is not None})
        serves, names, counts = {}, {}, Counter[str]()
        for s in fleet.servers:
            name = f"{s.role}-{counts[s.role]}"
            counts[s.role] += 1
            serves[name] = {s.server.model_name, *s.server.adapters}
            names[id(s.server)] = name
        distinct = sorted(set().union(*serves.values()))
        asked = assign_models(items, distinct, unknown_every)
        env = {"SPECGATE_BACKENDS": fleet.backends_setting(), "SPECGATE_POLICY": "adaptive",
               "SPECGATE_RANDOM_SEED": "1"}
        async with gateway_process(env, log_dir / "gateway-models.log") as url:
            await _listed(url, set(distinct), 30.0)
            started = time.perf_counter()
            measured = await replay(items, url, distinct[0], time_scale, model_of=asked)
            wall = time.perf_counter() - started
        served_by = {rec.request_id: names[id(s.server)] for s in fleet.servers for rec in s.server.stats.records}
        errors = {names[id(s.server)]: s.server.stats.errors for s in fleet.servers}
    statuses = {m.id: (m.status, m.error) for m in measured}
    out = tally(asked, statuses, served_by, serves, errors)
    out |= {"requests": len(items), "layout": layout, "models": models, "adapters": adapters,
            "unknown_every": unknown_every, "time_scale": time_scale, "wall_s": round(wall, 1)}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", required=True, help="a workload file (JSON Lines) or a built-in name")
    ap.add_argument("--layout", default="baseline,speculative,baseline,speculative")
    ap.add_argument("--models", default="alpha,alpha,beta,beta", help="the model of each layout entry")
    ap.add_argument("--adapters", default="", help="LoRA adapters, BASE=NAME[+NAME],... e.g. beta=beta-sql")
    ap.add_argument("--unknown-every", type=int, default=25)
    ap.add_argument("--time-scale", type=float, default=1.0)
    ap.add_argument("--limit", type=int, default=0, help="only the first N requests")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args(argv)
    items = load_workload(args.workload)
    items = items[:args.limit] if args.limit else items
    adapters = {b: n.split("+") for b, _, n in (p.partition("=") for p in args.adapters.split(",") if p)}
    with tempfile.TemporaryDirectory(prefix="specgate-models-") as tmp:
        out = asyncio.run(run(items, args.layout.split(","), args.models.split(","), adapters,
                              args.unknown_every, args.time_scale, Path(tmp)))
    args.out.write_text(json.dumps(out, indent=1))
    print(json.dumps({k: out[k] for k in ("requests", "misrouted", "server_errors", "by_model", "per_server",
                                          "unknown_reached_a_server")}, indent=1))


if __name__ == "__main__":
    main()
