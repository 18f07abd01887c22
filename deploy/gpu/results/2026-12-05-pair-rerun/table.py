"""The pair table: per run folder (real_bench.py's results.json), each policy's mean e2e per phase, its split,
adaptive ÷ the static baseline and ÷ the better static of the same folder, and the count of each reason."""

import json
import sys
from pathlib import Path

HEAD = ("| run | policy | phase | ok/n | mean e2e s | p90 e2e s | ÷ baseline alone | ÷ better static "
        "| split base/spec | reasons |")


def rows(folder: Path) -> list[str]:
    runs = json.loads((folder / "results.json").read_text())["runs"]
    mean = {(r["policy"], r["phase"]): r["summary"]["mean_e2e_s"] for r in runs}
    out = []
    for r in runs:
        pol, ph, s = r["policy"], r["phase"], r["summary"]
        base, spec = mean.get(("baseline", ph)), mean.get(("speculative", ph))
        better = min(x for x in (base, spec) if x is not None) if (base or spec) else None
        static = pol in ("baseline", "speculative")
        ratio_b = f"{s['mean_e2e_s'] / base:.2f}" if base and not static else ""
        ratio_s = f"{s['mean_e2e_s'] / better:.2f}" if better and not static else ""
        split = f"{s['split'].get('baseline', 0)}/{s['split'].get('speculative', 0)}"
        out.append(f"| {folder.name} | {pol} | {ph} | {s['ok']}/{s['n']} | {s['mean_e2e_s']:.3f} "
                   f"| {s['p90_e2e_s']:.3f} | {ratio_b} | {ratio_s} | {split} | {s.get('reasons')} |")
    return out


if __name__ == "__main__":
    print(HEAD)
    print("|---|---|---|---|---|---|---|---|---|---|")
    for f in sys.argv[1:]:
        print("\n".join(rows(Path(f))))
