"""Does `specgate plan --from URL` reproduce the plan made from the workload file that drove the deployment?

`python -m gateway.bench.plan.fromcheck --gpus 2 --workload demo-mixed --out-dir DIR`: starts an emulated
baseline + speculative fleet behind a loopback gateway, replays the workload through it, runs
`specgate plan --from` against the live gateway, then `specgate plan --workload` on the same file (both
with replays unless `--keep 0`), and writes `from.json`, `file.json` and `check.json` (the two
recommendations, whether they are the same, and whether they agree within the plan's tolerance: at each
load the `--from` pick, replayed from the file, is within `--tolerance` of the file's best mean).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from aiohttp import web
from prometheus_client import CollectorRegistry

from gateway.app import create_app
from gateway.bench.plan.cli import main as plan_main
from gateway.bench.replay.client import replay
from gateway.bench.replay.run import scaled_priors
from gateway.emulator import EmulatedFleet
from gateway.settings import Settings
from gateway.workloads.items import load_workload


async def check(args: argparse.Namespace) -> dict[str, object]:
    items = load_workload(args.workload)[: args.limit]
    priors = {k.removeprefix("SPECGATE_").lower(): float(v) for k, v in scaled_priors(args.scale).items()}
    common = ["--gpus", str(args.gpus), "--limit", str(args.limit), "--keep", str(args.keep),
              "--loads", args.loads, "--repeats", str(args.repeats)]
    async with EmulatedFleet(["baseline", "speculative"], time_scale=args.scale, model_name="specgate-emu") as fleet:
        fleet.register_references({i.id: i.reference for i in items if i.reference is not None})
        settings = Settings.model_validate({"backends": fleet.backends_setting().split(","), **priors})
        runner = web.AppRunner(create_app(settings, registry=CollectorRegistry()), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}"
        try:
            measured = await replay(items, url, "specgate-emu", args.scale, timeout_s=600)
            live = ["--from", url, "--from-time-scale", str(args.scale), "--out", str(args.out_dir / "from.json")]
            await asyncio.to_thread(plan_main, [*common, *live])
        finally:
            await runner.cleanup()
    brute = ["--brute-force"] if args.brute_force_file else []
    await asyncio.to_thread(plan_main, [*common, *brute, "--workload", args.workload,
                                        "--out", str(args.out_dir / "file.json")])
    a = json.loads((args.out_dir / "from.json").read_text())
    b = json.loads((args.out_dir / "file.json").read_text())
    ratios = within(a["recommendation"], b["rows"])
    return {"workload": args.workload, "gpus": args.gpus, "served": len(measured),
            "served_ok": sum(m.status == "200" for m in measured), "from": a["recommendation"],
            "file": b["recommendation"], "same": a["recommendation"] == b["recommendation"],
            "from_pick_over_file_best": ratios, "tolerance": args.tolerance,
            "agree": all(r is not None and r <= 1 + args.tolerance for r in ratios.values()),
            "from_source": a["source"], "from_wall_s": a["wall_s"], "file_wall_s": b["wall_s"]}


def within(picks: dict[str, str], file_rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """At each load, the file run's mean of the `--from` pick over the file run's best mean (None: the file
    run did not replay that layout)."""
    out: dict[str, float | None] = {}
    for load, pick in picks.items():
        means = {r["layout"]: r["mean_e2e_s"] for r in file_rows if str(r["load"]) == load and not r["errors"]}
        out[load] = round(means[pick] / min(means.values()), 4) if pick in means else None
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gateway.bench.plan.fromcheck", description=__doc__)
    p.add_argument("--gpus", type=int, default=2)
    p.add_argument("--workload", default="demo-mixed")
    p.add_argument("--limit", type=int, default=120)
    p.add_argument("--loads", default="0.5,1,2")
    p.add_argument("--keep", type=int, default=3)
    p.add_argument("--scale", type=float, default=0.2, help="the live deployment's wall s per simulated s")
    p.add_argument("--repeats", type=int, default=1, help="replays per layout and load in both plans")
    p.add_argument("--brute-force-file", action="store_true",
                   help="replay every layout from the file (the --from pick is then always measured there)")
    p.add_argument("--tolerance", type=float, default=0.03, help="how far from the file's best counts as agreeing")
    p.add_argument("--out-dir", type=Path, default=Path("specgate-plan-fromcheck"))
    args = p.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    doc = asyncio.run(check(args))
    (args.out_dir / "check.json").write_text(json.dumps(doc, indent=1) + "\n")
    print(f"--from: {doc['from']}\n--workload: {doc['file']}\nsame: {doc['same']}\n"
          f"--from pick / file best: {doc['from_pick_over_file_best']}\nagree: {doc['agree']}")
    return 0 if doc["agree"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
