"""`specgate calibrate`: replay the real-H200 calibration (CALIBRATION.md) on the emulator, side by side.

Closed loop, prompts of 400 words, 256 output tokens with ignore_eos, greedy, streaming with
continuous_usage_stats; c = 1, 4, 16, 64 with n = 4, 8, 32, 128 requests; each server alone, then both
loaded at the same c. Acceptance is synthetic (vLLM's synthetic rejection sampler): 3.35 tokens/step for
the 1B draft model, 3.3 and 1.4 for n-gram.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from .loadgen import LoadResult, closed_loop
from .pair import EmulatedPair

N_FOR_C = {1: 4, 4: 8, 16: 32, 64: 128}


@dataclass(frozen=True, slots=True)
class Measured:
    """One row of vLLM 0.26.0 on one H200 (calibration/*.jsonl): mean e2e s and TPOT ms, with the spread
    of repeated runs where there were several."""

    config: str  # baseline | draft | ngram | ngram-low
    together: bool
    conc: int
    e2e: tuple[float, float]
    tpot_ms: tuple[float, float]


# (config, together, c, e2e lo-hi, TPOT lo-hi); warm-up rows (the first after each server start) left out.
MEASURED: list[Measured] = [
    Measured("baseline", False, 1, (1.169, 1.212), (4.50, 4.66)),
    Measured("baseline", False, 4, (1.273, 1.273), (4.77, 4.77)),
    Measured("baseline", False, 16, (1.300, 1.449), (4.87, 5.16)),
    Measured("baseline", False, 64, (1.716, 2.156), (6.19, 6.75)),
    Measured("draft", False, 1, (1.293, 1.932), (4.74, 6.77)),
    Measured("draft", False, 4, (1.787, 1.787), (6.77, 6.77)),
    Measured("draft", False, 16, (1.854, 1.854), (6.93, 6.93)),
    Measured("draft", False, 64, (2.206, 2.206), (8.00, 8.00)),
    Measured("ngram", False, 1, (0.540, 0.540), (2.04, 2.04)),
    Measured("ngram", False, 4, (0.669, 0.669), (2.44, 2.44)),
    Measured("ngram", False, 16, (0.854, 0.854), (3.01, 3.01)),
    Measured("ngram", False, 64, (1.693, 1.693), (5.80, 5.80)),
    Measured("ngram-low", False, 1, (1.213, 1.213), (4.68, 4.68)),
    Measured("ngram-low", False, 4, (1.280, 1.280), (4.92, 4.92)),
    Measured("ngram-low", False, 16, (1.470, 1.470), (5.54, 5.54)),
    Measured("ngram-low", False, 64, (3.099, 3.099), (11.52, 11.52)),
    # both servers loaded at the same c: baseline with the draft-model server, then the draft-model server
    Measured("baseline+draft", True, 1, (2.094, 2.094), (8.12, 8.12)),
    Measured("baseline+draft", True, 4, (2.180, 2.180), (8.40, 8.40)),
    Measured("baseline+draft", True, 16, (2.501, 2.501), (9.55, 9.55)),
    Measured("baseline+draft", True, 64, (3.376, 3.376), (12.58, 12.58)),
    Measured("draft+baseline", True, 1, (1.677, 1.677), (6.39, 6.39)),
    Measured("draft+baseline", True, 4, (1.776, 1.776), (6.71, 6.71)),
    Measured("draft+baseline", True, 16, (2.241, 2.241), (7.81, 7.81)),
    Measured("draft+baseline", True, 64, (3.906, 3.906), (13.43, 13.43)),
    Measured("baseline+ngram", True, 4, (1.753, 1.753), (6.74, 6.74)),
    Measured("ngram+baseline", True, 4, (1.124, 1.124), (4.13, 4.13)),
]

# Each family runs on one pair, in the order of the real run, every row reusing the same prompt sequence
# (as the real run did, so vLLM's prefix cache served the prompts an earlier row had sent):
# (profile, synthetic acceptance length, alone rows on the baseline?, config of the speculative rows).
FAMILIES = (("h200-draft", 3.35, True, "draft"), ("h200-ngram", 3.3, False, "ngram"),
            ("h200-ngram", 1.4, False, "ngram-low"))


def auto_time_scale(conc: int) -> float:
    """Slow the clock where the Python event loop would otherwise fall behind (many concurrent streams)."""
    return max(1.0, conc / 8)


def _mid(r: tuple[float, float]) -> float:
    return (r[0] + r[1]) / 2


async def _family(
    profile: str, length: float, with_baseline: bool, config: str, concurrencies: tuple[int, ...],
    time_scale: float | None, together: bool,
) -> dict[tuple[str, int], LoadResult]:
    out: dict[tuple[str, int], LoadResult] = {}

    async def row(url: str, c: int, scale: float) -> LoadResult:
        pair.set_time_scale(scale)
        return await closed_loop(url, c, N_FOR_C[c], scale, seed=0)

    async with EmulatedPair(profile=profile, synthetic_acceptance_length=length) as pair:
        await row(pair.baseline_url, 1, 1.0)  # warm-up rows (left out of the table, as in the real run)
        await row(pair.speculative_url, 1, 1.0)
        for c in concurrencies if with_baseline else ():
            out[("baseline", c)] = await row(pair.baseline_url, c, time_scale or auto_time_scale(c))
        for c in concurrencies:
            out[(config, c)] = await row(pair.speculative_url, c, time_scale or auto_time_scale(c))
        for c in concurrencies if together else ():
            if not any(m.config == f"baseline+{config}" and m.conc == c for m in MEASURED):
                continue
            scale = time_scale or 2 * auto_time_scale(c)
            pair.set_time_scale(scale)
            # As in the real rerun, the speculative server has seen these prompts and the baseline mostly not.
            base, spec = await asyncio.gather(
                closed_loop(pair.baseline_url, c, N_FOR_C[c], scale, seed=1),
                closed_loop(pair.speculative_url, c, N_FOR_C[c], scale, seed=0),
            )
            out[(f"baseline+{config}", c)] = base
            out[(f"{config}+baseline", c)] = spec
    return out


async def calibrate(
    time_scale: float | None = None, concurrencies: tuple[int, ...] = (1, 4, 16, 64), together: bool = True
) -> list[dict[str, object]]:
    """Emulated vs measured rows; `time_scale` None picks `auto_time_scale(c)` per concurrency."""
    emulated: dict[tuple[str, int], LoadResult] = {}
    for profile, length, with_baseline, config in FAMILIES:
        emulated |= await _family(profile, length, with_baseline, config, concurrencies, time_scale, together)
    rows: list[dict[str, object]] = []
    for m in MEASURED:
        got = emulated.get((m.config, m.conc))
        if got is None:
            continue
        rows.append({
            "config": m.config, "together": m.together, "conc": m.conc,
            "measured_e2e_s": list(m.e2e), "measured_tpot_ms": list(m.tpot_ms),
            "emulated_e2e_s": got.mean_e2e, "emulated_tpot_ms": got.mean_tpot * 1000,
            "emulated_ttft_s": got.mean_ttft, "emulated_tokens_per_chunk": got.tokens_per_chunk,
            "e2e_ratio": got.mean_e2e / _mid(m.e2e), "tpot_ratio": got.mean_tpot * 1000 / _mid(m.tpot_ms),
            "errors": got.errors,
        })
    return rows


def _fmt_range(r: list[float], digits: int) -> str:
    lo, hi = r
    return f"{lo:.{digits}f}" if lo == hi else f"{lo:.{digits}f}-{hi:.{digits}f}"


def format_table(rows: list[dict[str, object]]) -> str:
    head = (f"{'config':<16}{'c':>4}  {'measured e2e':>13} {'emul e2e':>9} {'ratio':>6}   "
            f"{'measured TPOT':>13} {'emul TPOT':>9} {'ratio':>6}  {'tok/chunk':>9}")
    lines = [head, "-" * len(head)]
    for r in rows:
        flag = "" if abs(float(r["e2e_ratio"]) - 1) <= 0.15 and abs(float(r["tpot_ratio"]) - 1) <= 0.15 else "  *"  # type: ignore[arg-type]
        lines.append(
            f"{r['config']:<16}{r['conc']:>4}  {_fmt_range(r['measured_e2e_s'], 3):>13} "  # type: ignore[arg-type]
            f"{r['emulated_e2e_s']:>9.3f} {r['e2e_ratio']:>6.2f}   "
            f"{_fmt_range(r['measured_tpot_ms'], 2):>13} {r['emulated_tpot_ms']:>9.2f} "  # type: ignore[arg-type]
            f"{r['tpot_ratio']:>6.2f}  {r['emulated_tokens_per_chunk']:>9.2f}{flag}"
        )
    lines.append("e2e in seconds, TPOT in ms (simulated time); ratio = emulated / measured (midpoint of the "
                 "measured spread); * = off by more than 15%")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="specgate calibrate", description=__doc__)
    p.add_argument("--time-scale", type=float, default=None,
                   help="real seconds per simulated second (default: 1, slower at high concurrency)")
    p.add_argument("--alone-only", action="store_true", help="skip the rows with both servers loaded")
    p.add_argument("--out", help="write the rows as JSON here")
    p.add_argument("--concurrency", default="1,4,16,64", help="comma-separated c values")
    args = p.parse_args(argv)
    concs = tuple(int(x) for x in args.concurrency.split(","))
    if any(c not in N_FOR_C for c in concs):
        print(f"--concurrency: choose from {sorted(N_FOR_C)}", file=sys.stderr)
        return 2
    rows = asyncio.run(calibrate(args.time_scale, concs, together=not args.alone_only))
    print(format_table(rows))
    if args.out:
        Path(args.out).write_text(json.dumps({"time_scale": args.time_scale, "rows": rows}, indent=2) + "\n")
    return 0


