"""The same task classes through the project's emulator, next to the real per-class tokens per step.

    python deploy/gpu/train/compare_emulator.py --prompts DATA/prompts.jsonl --real OUT/results.json \
        [--requests OUT/requests.jsonl] [--labels draft,ngram] [--out compare.json]

For each real speculative server label (draft -> emulator profile h200-draft, ngram -> h200-ngram) this starts
`python -m gateway emulate` on free ports, registers as each request's reference what the real target
generated for that prompt (OUT/requests.jsonl; without it, the held-out reference answer), replays the same
segments with measure_acceptance.py against the emulated speculative server, and prints per class and mode
the real and the emulated tokens per step, their ratio and whether it is within --tolerance (20%). The
emulator drafts for real on the text (prompt lookup; an n-gram draft that learned the other references) but
counts its own word-level tokens, so the ratio compares acceptance on the same text, not the same token boundaries.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import measure_acceptance as ma

PROFILES = {"draft": "h200-draft", "ngram": "h200-ngram"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def post_json(url: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return dict(json.loads(r.read()))


def start_emulator(profile: str, python: str, time_scale: float) -> tuple[subprocess.Popen[bytes], str]:
    bport = free_port()
    sport = free_port()
    proc = subprocess.Popen([python, "-m", "gateway", "emulate", "--profile", profile, "--model", "target",
                             "--time-scale", str(time_scale), "--baseline-port", str(bport),
                             "--speculative-port", str(sport)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{sport}"
    for _ in range(100):
        try:
            urllib.request.urlopen(url + "/health", timeout=1).close()
            return proc, url
        except OSError:
            time.sleep(0.2)
    proc.terminate()
    raise RuntimeError(f"emulator ({profile}) did not start")


def references(prompts: list[dict[str, Any]], rows: list[dict[str, Any]], real_label: str, emu_label: str) -> dict[
        str, str]:
    """x-request-id -> the text the real target generated for that prompt (else the held-out reference)."""
    real = {r["id"]: r["text"] for r in rows if r.get("label") == real_label and "error" not in r}
    return {f"{emu_label}-{p['id']}": real.get(p["id"], p["reference"]) for p in prompts}


def emulate(label: str, prompts: list[dict[str, Any]], rows: list[dict[str, Any]], args: argparse.Namespace) -> dict[
        str, Any]:
    proc, url = start_emulator(PROFILES[label], args.python, args.time_scale)
    try:
        emu_label = f"emu-{label}"
        post_json(url + "/emulator/references", {"references": references(prompts, rows, label, emu_label)})
        ns = argparse.Namespace(url=url, label=emu_label, model="target", conc=args.conc, per_class=args.per_class,
                                classes=None, modes=["greedy", "sampled"], warmup=0, budget_s=args.budget_s,
                                timeout_s=120.0)
        result, _ = ma.run(ns, prompts)
        return result
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def table(real: dict[str, Any], emu: dict[str, dict[str, Any]], tolerance: float) -> tuple[str, list[dict[str, Any]]]:
    lines = ["| server | class / mode | real tok/step | emulated tok/step | emu / real | within | real acc. rate |"
             " emu acc. rate |", "|---|---|---|---|---|---|---|---|"]
    rows = []
    for label, emu_res in emu.items():
        for seg, e in emu_res["segments"].items():
            r = real.get("servers", {}).get(label, {}).get("segments", {}).get(seg, {})
            rt, et = r.get("tokens_per_step"), e.get("tokens_per_step")
            ratio = et / rt if rt and et else None
            ok = ratio is not None and abs(ratio - 1) <= tolerance
            rows.append({"server": label, "segment": seg, "real_tokens_per_step": rt, "emu_tokens_per_step": et,
                         "ratio": ratio, "within": ok, "real_acceptance_rate": r.get("acceptance_rate"),
                         "emu_acceptance_rate": e.get("acceptance_rate")})
            lines.append(f"| {label} | {seg} | {fmt(rt)} | {fmt(et)} | {fmt(ratio)} | {'yes' if ok else 'no'} | "
                         f"{fmt(r.get('acceptance_rate'))} | {fmt(e.get('acceptance_rate'))} |")
    n_ok = sum(r["within"] for r in rows)
    lines.append(f"\n{n_ok}/{len(rows)} segments within {tolerance:.0%} of the real tokens per step.")
    return "\n".join(lines), rows


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=Path, required=True)
    p.add_argument("--real", type=Path, required=True, help="results.json of measure_acceptance.py")
    p.add_argument("--requests", type=Path, help="requests.jsonl of measure_acceptance.py (the real texts)")
    p.add_argument("--labels", default="draft,ngram")
    p.add_argument("--conc", type=int, default=8)
    p.add_argument("--per-class", type=int, default=0)
    p.add_argument("--tolerance", type=float, default=0.20)
    p.add_argument("--time-scale", type=float, default=0.05, help="emulator real seconds per simulated second")
    p.add_argument("--budget-s", type=float, default=600.0)
    p.add_argument("--python", default=sys.executable, help="a Python with the gateway installed")
    p.add_argument("--out", type=Path, help="write the rows and the table here (JSON)")
    args = p.parse_args(argv)
    prompts = [json.loads(line) for line in args.prompts.read_text().splitlines() if line.strip()]
    real = json.loads(args.real.read_text())
    rows = []
    if args.requests and args.requests.exists():
        rows = [json.loads(line) for line in args.requests.read_text().splitlines() if line.strip()]
    labels = [lb for lb in args.labels.split(",") if lb in PROFILES]
    emu = {label: emulate(label, prompts, rows, args) for label in labels}
    text, out_rows = table(real, emu, args.tolerance)
    print(text)
    if args.out:
        args.out.write_text(json.dumps({"rows": out_rows, "emulated": emu, "table": text}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
