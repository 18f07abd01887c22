"""The robustness table from separate runs: `python -m gateway.bench.robust_table DIR` pairs every
`static--NAME.json` (`specgate bench --policies baseline,speculative`, once) with `adaptive--NAME.json`
(`--policies adaptive --repeat 3 --seed 1`) in DIR and prints `specgate evaluate --robust`'s table for them.
Running the statics once and adaptive three times costs 5 replays a cell instead of the 9 of one
`--repeat 3` run of all three."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from gateway.bench.evaluate import robust_markdown, robust_row_of


def merged_row(static: Path, adaptive: Path) -> dict[str, object]:
    doc = json.loads(static.read_text())
    doc["policies"].update(json.loads(adaptive.read_text())["policies"])
    row = robust_row_of(doc)
    row["workload"] = static.stem.removeprefix("static--")  # the run's name: workload, scale, commit
    return row


def main(argv: list[str]) -> int:
    directory = Path(argv[0])
    pairs = [(s, s.with_name("adaptive--" + s.name.removeprefix("static--")))
             for s in sorted(directory.glob("static--*.json"))]
    rows = [merged_row(static, adaptive) for static, adaptive in pairs if adaptive.exists()]
    print(robust_markdown(rows), end="")
    return 0 if rows else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
