"""`python -m gateway.bench.fleet.replica_summary DIR`: the replica targets from `specgate bench --gateways N`
result files in DIR (named `<workload>-g<N>-seed<S>.json`, `<workload>-workers2-seed<S>.json`,
`<workload>-g2-rolling-<warm>-seed<S>.json`); prints markdown tables and writes DIR/summary.json.

- replicas vs one: per seed, the mean end-to-end of N replicas ÷ one replica's, and the difference in the
  share of requests sent to the speculative role (points); medians and ranges over seeds.
- rolling restart: failed requests; per restart, probes (reason `explore`) among the 100 requests sent after
  the restarted replica was ready vs the 100 sent before it was stopped, the ratio of their mean e2e, and the
  after-window's mean ÷ the same requests' in the run of the same seed without restarts (`-g2-seed<S>`).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from pathlib import Path
from typing import Any

NAME = re.compile(r"^(?P<wl>.+?)-(?P<cfg>g\d+|workers\d+|g\d+-rolling-\w+)-seed(?P<seed>\d+)\.json$")
WINDOW = 100


def _adaptive(doc: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = doc["policies"]["adaptive"]
    return result


def replica_shares(logs: Path) -> list[float]:
    """Share of each replica's requests it sent to the speculative role, from its JSON log lines."""
    shares = []
    for path in sorted(logs.glob("gateway-*-r[0-9].log")):
        roles = [line.get("backend") for line in map(_json_or_none, path.read_text(errors="replace").splitlines())
                 if line and line.get("event") == "request"]
        if roles:
            shares.append(round(roles.count("speculative") / len(roles), 2))
    return shares


def _json_or_none(raw: str) -> dict[str, Any] | None:
    if not raw.startswith("{"):
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def run_row(doc: dict[str, Any]) -> dict[str, Any]:
    res = _adaptive(doc)
    s, reqs = res["summary"], res["requests"]
    routed = s["routed"]
    return {"mean_e2e_s": s["mean_e2e_s"], "p90_e2e_s": s["p90_e2e_s"], "requests": s["requests"],
            "failed": sum(1 for r in reqs if r.get("status") != "200"),
            "speculative_share": routed.get("speculative", 0) / max(sum(routed.values()), 1),
            "probes": sum(1 for r in reqs if str(r.get("reason") or "").startswith("explore"))}


def restart_rows(doc: dict[str, Any], reference: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Per restart: the 100 requests sent before the stop and the 100 sent after the replica was back; with a
    `reference` run (same workload and seed, no restart), also the after-window's mean ÷ the same requests' there."""
    res = _adaptive(doc)
    ref = {r["id"]: r["e2e_s"] for r in _adaptive(reference)["requests"]} if reference else {}
    reqs = sorted((r for r in res["requests"] if r.get("sent_s") is not None), key=lambda r: r["sent_s"])
    rows = []
    for event in (res.get("restarts") or [[]])[0]:
        before = [r for r in reqs if r["sent_s"] < event["stop_s"]][-WINDOW:]
        after = [r for r in reqs if r["sent_s"] >= event["ready_s"]][:WINDOW]

        def mean(rs: list[dict[str, Any]]) -> float:
            vals = [r["e2e_s"] for r in rs if r.get("e2e_s") is not None]
            return statistics.fmean(vals) if vals else float("nan")

        rows.append({"replica": event["replica"], "stop_s": event["stop_s"], "down_s": round(
            event["ready_s"] - event["stop_s"], 2), "before": len(before), "after": len(after),
            "probes_before": sum(1 for r in before if str(r.get("reason") or "").startswith("explore")),
            "probes_after": sum(1 for r in after if str(r.get("reason") or "").startswith("explore")),
            "mean_after_over_before": round(mean(after) / mean(before), 3) if before and after else None,
            "mean_after_over_no_restart": _paired(after, ref)})
    return rows


def _paired(window: list[dict[str, Any]], ref: dict[str, float | None]) -> float | None:
    pairs = [(float(r["e2e_s"]), float(ref[r["id"]] or 0.0)) for r in window
             if r.get("e2e_s") is not None and ref.get(r["id"])]
    if not pairs:
        return None
    return round(sum(a for a, _ in pairs) / sum(b for _, b in pairs), 3)


def _spread(xs: list[float]) -> str:
    return f"{statistics.median(xs):.3f} ({min(xs):.3f}–{max(xs):.3f})" if xs else "–"


def summarize(directory: Path) -> dict[str, Any]:
    runs: dict[tuple[str, str, int], dict[str, Any]] = {}
    per_replica: dict[tuple[str, str, int], list[float]] = {}
    for path in sorted(directory.glob("*.json")):
        m = NAME.match(path.name)
        if m:
            key = (m["wl"], m["cfg"], int(m["seed"]))
            runs[key] = json.loads(path.read_text())
            per_replica[key] = replica_shares(path.with_name(path.stem + "-logs"))
    out: dict[str, Any] = {"replicas": [], "rolling": []}
    for wl in sorted({k[0] for k in runs}):
        seeds = sorted({k[2] for k in runs if k[0] == wl and k[1] == "g1"})
        for cfg in ("g1", "g2", "g4", "workers2"):
            rows = {s: run_row(runs[(wl, cfg, s)]) for s in seeds if (wl, cfg, s) in runs}
            ones = {s: run_row(runs[(wl, "g1", s)]) for s in rows}
            if not rows:
                continue
            out["replicas"].append({
                "workload": wl, "config": cfg, "seeds": sorted(rows),
                "mean_e2e_s": [rows[s]["mean_e2e_s"] for s in sorted(rows)],
                "ratio_to_one": [round(rows[s]["mean_e2e_s"] / ones[s]["mean_e2e_s"], 3) for s in sorted(rows)],
                "speculative_share": [round(rows[s]["speculative_share"], 3) for s in sorted(rows)],
                "share_points_vs_one": [round(100 * (rows[s]["speculative_share"] - ones[s]["speculative_share"]), 1)
                                        for s in sorted(rows)],
                "probes": [rows[s]["probes"] for s in sorted(rows)],
                "replica_speculative_shares": [per_replica.get((wl, cfg, s), []) for s in sorted(rows)],
                "failed": sum(rows[s]["failed"] for s in rows)})
        for (w, cfg, seed), doc in sorted(runs.items()):
            if w == wl and "rolling" in cfg:
                reference = runs.get((wl, "g2", seed))  # same replicas and seed, no restart
                out["rolling"].append({"workload": wl, "warm": cfg.rsplit("-", 1)[1], "seed": seed,
                                       **run_row(doc), "restarts": restart_rows(doc, reference)})
    return out


def markdown(summary: dict[str, Any]) -> str:
    lines = ["| workload | gateways | seeds | mean e2e (s) per seed | ÷ one replica, median (range) "
             "| → speculative per seed | share Δ vs one (points) | probes | failed |", "|" + "---|" * 9]
    for r in summary["replicas"]:
        lines.append(f"| {r['workload']} | {r['config']} | {len(r['seeds'])} | "
                     f"{' / '.join(f'{x:.3f}' for x in r['mean_e2e_s'])} | {_spread(r['ratio_to_one'])} | "
                     f"{' / '.join(f'{100 * x:.0f}%' for x in r['speculative_share'])} | "
                     f"{' / '.join(f'{x:+.0f}' for x in r['share_points_vs_one'])} | "
                     f"{' / '.join(str(x) for x in r['probes'])} | {r['failed']} |")
    if summary["rolling"]:
        lines += ["", "| warm start | seed | failed | mean e2e (s) | per restart: replica, down (s), probes in the 100 "
                      "before → 100 after, mean of the 100 after ÷ the 100 before, ÷ the same requests without a "
                      "restart |", "|---|---|---|---|---|"]
        for r in summary["rolling"]:
            restarts = "; ".join(f"r{x['replica']} {x['down_s']} s, {x['probes_before']}→{x['probes_after']}, "
                                 f"{x['mean_after_over_before']}, {x['mean_after_over_no_restart']}"
                                 for x in r["restarts"])
            lines.append(f"| {r['warm']} | {r['seed']} | {r['failed']}/{r['requests']} | {r['mean_e2e_s']:.3f} | "
                         f"{restarts} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    directory = Path(args[0]) if args else Path("results")
    summary = summarize(directory)
    (directory / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(markdown(summary), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
