"""Where the gateway's prediction error comes from, per run, from its access log (one JSON line per request, with
`predicted_s`, `predicted_ttft_s`, `predicted_output_tokens`, `observed_s`, `ttft_s`, `completion_tokens`):

- `median`: median |predicted − observed| / observed end-to-end (what `specgate bench` reports);
- `ttft_only`: the same if only the TTFT were predicted (the observed decode put in): the TTFT's share;
- `decode_only`: the same if only the decode were predicted (the observed TTFT put in);
- `true_length`: the prediction with the true output length (its per-token decode time kept);
- `length_err`: median |predicted − true| / true output length;
- `ttft_bias`: median (predicted − observed) / observed TTFT;
- `per_token` per role: median predicted / observed decode seconds a token (requests of ≥ 4 tokens);
- `floor`: the error left with the best constant length per (class, bucket, max_tokens) cell chosen in hindsight
  (TTFT and per-token time as predicted): what any length predictor that reads only those can reach.

    python prediction_error.py WORKLOAD.jsonl 'RUN-logs/gateway-adaptive*.log' [...]
"""

from __future__ import annotations

import glob
import json
import statistics
import sys
from collections import defaultdict
from typing import Any


def _med(xs: list[float]) -> float | None:
    return round(statistics.median(xs), 3) if xs else None


def _err(r: dict[str, Any], length: float) -> float:
    """Relative e2e error with `length` output tokens at the predicted TTFT and per-token decode time."""
    p, pt, po = r["predicted_s"], r["predicted_ttft_s"], r["predicted_output_tokens"]
    per = (p - pt) / (po - 1) if po > 1 else 0.0
    return abs(pt + per * max(length - 1, 0) - r["observed_s"]) / r["observed_s"]


def analyse(workload: str, pattern: str) -> dict[str, Any]:
    with open(workload) as f:
        max_tokens = {(item := json.loads(line))["id"]: item["body"].get("max_tokens") for line in f}
    rows = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            rows += [json.loads(line) for line in f if line.startswith("{")]
    rows = [r for r in rows if r.get("event") == "request" and r.get("status") == "200" and r.get("predicted_s")
            and r.get("observed_s") and r.get("ttft_s") and r.get("predicted_output_tokens")]
    out: dict[str, Any] = {"requests": len(rows)}
    out["median"] = _med([abs(r["predicted_s"] - r["observed_s"]) / r["observed_s"] for r in rows])
    out["ttft_only"] = _med([abs(r["predicted_ttft_s"] - r["ttft_s"]) / r["observed_s"] for r in rows])
    out["decode_only"] = _med([abs(r["ttft_s"] + r["predicted_s"] - r["predicted_ttft_s"] - r["observed_s"])
                               / r["observed_s"] for r in rows])
    out["true_length"] = _med([_err(r, r["completion_tokens"]) for r in rows])
    out["length_err"] = _med([abs(r["predicted_output_tokens"] - r["completion_tokens"]) / r["completion_tokens"]
                              for r in rows if r["completion_tokens"]])
    out["ttft_bias"] = _med([(r["predicted_ttft_s"] - r["ttft_s"]) / r["ttft_s"] for r in rows])
    per_token: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["completion_tokens"] >= 4 and r["predicted_output_tokens"] > 1:
            predicted = (r["predicted_s"] - r["predicted_ttft_s"]) / (r["predicted_output_tokens"] - 1)
            observed = (r["observed_s"] - r["ttft_s"]) / (r["completion_tokens"] - 1)
            per_token[r["backend"]].append(predicted / observed)
    out["per_token"] = {role: _med(v) for role, v in sorted(per_token.items())}
    cells: dict[tuple[str, str, int | None], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        cells[(r["class"], r["temperature"], max_tokens.get(r["id"]))].append(r)
    floor = []
    for cell in cells.values():
        best = min({r["completion_tokens"] for r in cell}, key=lambda c: statistics.median(_err(r, c) for r in cell))
        floor += [_err(r, best) for r in cell]
    out["floor"] = _med(floor)
    return out


if __name__ == "__main__":
    workload = sys.argv[1]
    for pattern in sys.argv[2:]:
        print(pattern, json.dumps(analyse(workload, pattern)))
