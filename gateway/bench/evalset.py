"""The standing evaluation set: specgate against its best static fleet and the real peer routers, on
windows of public production traces and on the built-in workloads, for one GPU and 1 + 1, 2 + 2 and 4 + 4
emulated fleets, three seeds.

    python -m gateway.bench.evalset --list                      # the whole set, cell by cell
    python -m gateway.bench.evalset --windows azure-code-a,mooncake-a --fleets 2+2 --seeds 1 \\
        --out-dir results/peers-2026-12-05                      # run a subset (each cell: one bench per group)

A cell is (workload, fleet). Per cell: `adaptive` with the seeds (`bench --repeat`), the static fleets of the
same size (all baseline, all speculative: `least_loaded@Nx...`; on one GPU the pair's `baseline` and
`speculative` policies) and the peers (`bench --peers`), each on a fresh emulated fleet, time scale 1. Trace
windows are built first (`specgate workload --from-trace`) from the files under `--traces` (fetched,
not vendored: docs/emulator.md). The table: specgate (median over seeds) ÷ best peer and ÷ best static per
cell, and where specgate loses, per class, from the per-request records (`loss_rows`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gateway.bench.cell import write_table
from gateway.bench.peers.spec import is_peer

PEERS = "vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware"
SEEDS = (1, 2, 3)
FLEETS = {"1gpu": None, "1+1": "baseline,speculative", "2+2": "2xbaseline,2xspeculative",
          "4+4": "4xbaseline,4xspeculative"}
BUILTIN_WORKLOADS = ("demo-mixed", "mixed-low", "mixed-medium", "mixed-high", "mixed-phases", "structured-heavy",
                     "creative-heavy", "bursty")


@dataclass(frozen=True, slots=True)
class Window:
    """A window of a trace: `seconds` from `start` of the file, arrivals times `rate_scale`."""

    name: str
    source: str
    file: str  # under --traces
    start: float
    seconds: float
    rate_scale: float


WINDOWS = (  # several places per trace, at low and high rate scales (the trace's own rate is 1)
    Window("azure-code-a", "azure-code", "AzureLLMInferenceTrace_code.csv", 600, 60, 1.0),  # 7/s, peak 19
    Window("azure-code-a-x0.5", "azure-code", "AzureLLMInferenceTrace_code.csv", 600, 60, 0.5),
    Window("azure-code-burst", "azure-code", "AzureLLMInferenceTrace_code.csv", 840, 40, 1.0),  # 67 in one second
    Window("azure-code-b", "azure-code", "AzureLLMInferenceTrace_code.csv", 1690, 60, 1.0),  # 7/s, peak 40
    Window("azure-code-b-x2", "azure-code", "AzureLLMInferenceTrace_code.csv", 1690, 60, 2.0),
    Window("azure-conv-a", "azure-conv", "AzureLLMInferenceTrace_conv.csv", 600, 60, 1.0),  # 5/s
    Window("azure-conv-a-x2", "azure-conv", "AzureLLMInferenceTrace_conv.csv", 600, 60, 2.0),
    Window("azure-conv-b", "azure-conv", "AzureLLMInferenceTrace_conv.csv", 1749, 60, 1.0),  # 7/s, short outputs
    Window("azure-conv-b-x2", "azure-conv", "AzureLLMInferenceTrace_conv.csv", 1749, 60, 2.0),
    Window("mooncake-a", "mooncake", "mooncake_conversation_trace.jsonl", 0, 60, 1.0),  # 3/s, 14k-token prompts
    Window("mooncake-a-x0.5", "mooncake", "mooncake_conversation_trace.jsonl", 0, 60, 0.5),
    Window("mooncake-b", "mooncake", "mooncake_conversation_trace.jsonl", 2356, 60, 1.0),  # 4/s
    Window("mooncake-synthetic", "mooncake", "mooncake_synthetic_trace.jsonl", 0, 60, 1.0),
    Window("burstgpt-a", "burstgpt", "BurstGPT_1.csv", 86400, 600, 10.0),  # Git LFS: fetch it with git lfs
    Window("burstgpt-a-x30", "burstgpt", "BurstGPT_1.csv", 86400, 600, 30.0),
)


def _size(fleet: str | None) -> int:
    return 1 if fleet is None else sum(int(p.split("x")[0]) if p[0].isdigit() else 1 for p in fleet.split(","))


def statics(fleet: str | None) -> list[str]:
    if fleet is None:
        return ["baseline", "speculative"]
    return [f"least_loaded@{_size(fleet)}xbaseline", f"least_loaded@{_size(fleet)}xspeculative"]


def cells(windows: list[str], workloads: list[str], fleets: list[str]) -> list[tuple[str, str]]:
    return [(w, f) for w in [*windows, *workloads] for f in fleets]


def build_window(window: Window, traces: Path, out_dir: Path, seed: int = 0) -> Path:
    out = out_dir / "workloads" / f"{window.name}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "gateway", "workload", "--from-trace", window.source, str(traces / window.file),
           "--window", f"{window.start:g}:{window.seconds:g}", "--rate-scale", f"{window.rate_scale:g}",
           "--seed", str(seed), "--out", str(out)]
    print("$", " ".join(cmd[2:]), flush=True)
    subprocess.run(cmd, check=True)
    return out


def run_cell(workload: str, name: str, fleet_label: str, args: argparse.Namespace) -> Path:
    """One bench with the statics and the peers, one with adaptive over the seeds; merged into one file."""
    fleet = FLEETS[fleet_label]
    out: Path = args.out_dir / f"cell--{name}--{fleet_label}.json"
    base = [sys.executable, "-m", "gateway", "bench", "--workload", workload, "--time-scale", "1",
            *(["--fleet", fleet] if fleet else [])]
    others = out.with_name(out.stem + "--others.json")
    for cmd in ([*base, "--policies", ",".join(statics(fleet)), *(["--peers", args.peers] if args.peers else []),
                 "--out", str(others)],
                [*base, "--policies", "adaptive", "--repeat", str(len(args.seeds)), "--seed", str(args.seeds[0]),
                 "--out", str(out)]):
        print("$", " ".join(cmd[2:]), flush=True)
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    if others.exists() and out.exists():
        merged = json.loads(out.read_text())
        merged["policies"].update(json.loads(others.read_text())["policies"])
        merged["cell"] = {"name": name, "fleet": fleet_label}
        out.write_text(json.dumps(merged, indent=1))
        others.unlink()
    return out


def _mean(records: list[dict[str, Any]]) -> float | None:
    done = [r["e2e_s"] for r in records if r.get("e2e_s") is not None and r.get("status") == "200"]
    return statistics.fmean(done) if done else None


def _seed_means(result: dict[str, Any]) -> list[float]:
    runs: dict[int, list[dict[str, Any]]] = {}
    for r in result["requests"]:
        runs.setdefault(r.get("repeat", 0), []).append(r)
    return sorted(m for m in (_mean(rs) for rs in runs.values()) if m is not None)


def cell_row(doc: dict[str, Any]) -> dict[str, Any]:
    pol = doc["policies"]
    mean = {n: p["summary"]["mean_e2e_s"] for n, p in pol.items()}
    seeds = _seed_means(pol["adaptive"])
    med = statistics.median(seeds)
    static = [n for n in pol if n in ("baseline", "speculative") or ("@" in n and not is_peer(n))]
    best_static = min(static, key=lambda n: mean[n])
    peers = {n: m for n, m in mean.items() if is_peer(n)}
    ran = {n: m for n, m in peers.items() if m is not None and pol[n]["summary"]["errors"] == 0}
    best_peer = min(ran, key=lambda n: ran[n]) if ran else None
    spec_share = [round(100 * sum(1 for r in rs if r.get("backend") == "speculative") / len(rs))
                  for rs in _by_repeat(pol["adaptive"]["requests"]).values()]
    return {"cell": doc.get("cell", {}).get("name", doc["workload"]), "fleet": doc.get("cell", {}).get("fleet", "?"),
            "requests": pol["adaptive"]["summary"]["requests"] // max(len(seeds), 1),
            "adaptive_seeds": [round(x, 3) for x in seeds], "best_static": best_static,
            "best_static_mean": round(mean[best_static], 3),
            "peers": {n: None if m is None else round(m, 3) for n, m in peers.items()},
            "peer_errors": {n: pol[n]["summary"]["errors"] for n in peers},
            "best_peer": best_peer, "vs_best_static": round(med / mean[best_static], 3),
            "vs_best_peer": round(med / ran[best_peer], 3) if best_peer else None, "to_speculative_pct": spec_share}


def _by_repeat(records: list[dict[str, Any]]) -> dict[int, list[dict[str, Any]]]:
    runs: dict[int, list[dict[str, Any]]] = {}
    for r in records:
        runs.setdefault(r.get("repeat", 0), []).append(r)
    return runs


def loss_rows(doc: dict[str, Any], rival: str) -> list[dict[str, Any]]:
    """Per class: adaptive's (first seed) and the rival's mean e2e, each one's share to speculative, and the
    class's share of the total gap (positive: adaptive slower), from the per-request records."""
    pol = doc["policies"]
    mine = {r["id"]: r for r in _by_repeat(pol["adaptive"]["requests"]).get(min(_by_repeat(
        pol["adaptive"]["requests"])), [])}
    theirs = {r["id"]: r for r in pol[rival]["requests"]}
    by_class: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {}
    for rid, a in mine.items():
        b = theirs.get(rid)
        if b and a.get("e2e_s") is not None and b.get("e2e_s") is not None:
            by_class.setdefault(str(a.get("kind") or "?"), []).append((a, b))
    total = sum(a["e2e_s"] - b["e2e_s"] for pairs in by_class.values() for a, b in pairs) or 1e-9
    rows = []
    for kind, pairs in sorted(by_class.items()):
        gap = sum(a["e2e_s"] - b["e2e_s"] for a, b in pairs)
        rows.append({"kind": kind, "requests": len(pairs),
                     "adaptive_mean_s": round(statistics.fmean(a["e2e_s"] for a, _ in pairs), 3),
                     "rival_mean_s": round(statistics.fmean(b["e2e_s"] for _, b in pairs), 3),
                     "adaptive_to_spec_pct": round(100 * sum(a.get("backend") == "speculative" for a, _ in pairs)
                                                   / len(pairs)),
                     "rival_to_spec_pct": round(100 * sum(b.get("backend") == "speculative" for _, b in pairs)
                                                / len(pairs)),
                     "gap_share_pct": round(100 * gap / total)})
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    lines = ["| cell | fleet | req | adaptive (seeds) | best static | peers (mean e2e s) | ÷ best static "
             "| ÷ best peer | → spec % |", "|" + "---|" * 9]
    for r in rows:
        peers = ", ".join(f"{n.replace('-router', '')} {m}" + (f" ({r['peer_errors'][n]} err)"
                                                               if r["peer_errors"][n] else "")
                          for n, m in r["peers"].items())
        lines.append(f"| {r['cell']} | {r['fleet']} | {r['requests']} | {r['adaptive_seeds']} | "
                     f"{r['best_static_mean']} ({r['best_static']}) | {peers} | {r['vs_best_static']} | "
                     f"{r['vs_best_peer']} ({r['best_peer']}) | {r['to_speculative_pct']} |")
    return "\n".join(lines) + "\n"


def loss_markdown(docs: list[dict[str, Any]], rows: list[dict[str, Any]]) -> str:
    """For each cell adaptive loses (to the best peer or the best static), where the gap comes from, per kind."""
    out = []
    for doc, row in zip(docs, rows, strict=True):
        for rival, ratio in ((row["best_peer"], row["vs_best_peer"]), (row["best_static"], row["vs_best_static"])):
            if rival is None or ratio is None or ratio <= 1.0:
                continue
            out.append(f"\n**{row['cell']} on {row['fleet']}: adaptive {ratio}× {rival}**\n")
            out.append("| kind | req | adaptive | rival | adaptive → spec % | rival → spec % | share of the gap % |")
            out.append("|---|---|---|---|---|---|---|")
            for k in loss_rows(doc, rival):
                out.append(f"| {k['kind']} | {k['requests']} | {k['adaptive_mean_s']} | {k['rival_mean_s']} | "
                           f"{k['adaptive_to_spec_pct']} | {k['rival_to_spec_pct']} | {k['gap_share_pct']} |")
    return "\n".join(out) + "\n" if out else ""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m gateway.bench.evalset", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--list", action="store_true", help="print the whole set and exit")
    p.add_argument("--windows", default=",".join(w.name for w in WINDOWS), help="trace windows (names), or ''")
    p.add_argument("--workloads", default=",".join(BUILTIN_WORKLOADS), help="built-in workloads, or ''")
    p.add_argument("--fleets", default=",".join(FLEETS), help=f"from {', '.join(FLEETS)}")
    p.add_argument("--seeds", default=",".join(map(str, SEEDS)), help="adaptive's seeds (consecutive)")
    p.add_argument("--peers", default=PEERS, help="peer routers (bench --peers), or ''")
    p.add_argument("--traces", type=Path, default=Path("traces"), help="folder of the fetched trace files")
    p.add_argument("--out-dir", type=Path, default=Path("results/evalset"))
    p.add_argument("--only-summarize", action="store_true", help="rebuild the table from the cells' files")
    return p


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    windows = [w for w in WINDOWS if w.name in args.windows.split(",")]
    workloads = [w for w in args.workloads.split(",") if w]
    fleets = [f for f in args.fleets.split(",") if f]
    args.seeds = [int(s) for s in args.seeds.split(",") if s]
    todo = cells([w.name for w in windows], workloads, fleets)
    if args.list:
        for name, fleet in todo:
            print(f"{name:20} {fleet:5} adaptive x{len(args.seeds)} seeds, {', '.join(statics(FLEETS[fleet]))}, "
                  f"{args.peers or 'no peers'}")
        print(f"{len(todo)} cells ({len(windows)} trace windows + {len(workloads)} built-ins) x {len(fleets)} fleets")
        return 0
    args.out_dir.mkdir(parents=True, exist_ok=True)
    files = {w.name: str(build_window(w, args.traces, args.out_dir)) for w in windows if not args.only_summarize}
    docs = []
    for name, fleet in todo:
        out = args.out_dir / f"cell--{name}--{fleet}.json"
        if not args.only_summarize:
            run_cell(files.get(name, name), name, fleet, args)
        if out.exists():
            docs.append(json.loads(out.read_text()))
    rows = [cell_row(d) for d in docs]
    write_table(args.out_dir / "EVALSET.md", "The standing evaluation set (the part run)",
                f"Mean end-to-end seconds (simulated, time scale 1). Command: `python -m gateway.bench.evalset "
                f"{' '.join(argv)}`.", markdown(rows) + loss_markdown(docs, rows))
    (args.out_dir / "evalset-rows.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
