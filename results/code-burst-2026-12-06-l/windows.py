# ruff: noqa  -- a quick analysis script, kept as it ran
"""Per 5-second window of arrival (from the first request): requests, mean e2e, mean TTFT, decode seconds per step,
share to speculation, for each gateway log given as LABEL=PATH (`gateway-*.log` of a bench's -logs folder)."""
import datetime, json, sys
from collections import defaultdict


def ts(x):
    return datetime.datetime.fromisoformat(x.replace("Z", "+00:00")).timestamp()


def load(path):
    rows = [json.loads(l) for l in open(path) if '"event":"request"' in l]
    t0 = min(ts(r["time"]) - r["observed_s"] for r in rows)
    return [(ts(r["time"]) - r["observed_s"] - t0, r) for r in rows]


runs = [a.split("=", 1) for a in sys.argv[1:]]
data = {label: load(path) for label, path in runs}
print("| window s | " + " | ".join(f"{l}: n, e2e, ttft, ms/step, spec" for l, _ in runs) + " |")
print("|---|" + "---|" * len(runs))
for w in range(0, 45, 5):
    cells = []
    for label, _ in runs:
        sel = [r for t, r in data[label] if w <= t < w + 5]
        if not sel:
            cells.append("-")
            continue
        n = len(sel)
        e2e = sum(r["observed_s"] for r in sel) / n
        ttft = sum(r["ttft_s"] for r in sel) / n
        steps = sum(max(r["engine_steps"] - 1, 0) for r in sel)
        dec = sum(r["observed_s"] - r["ttft_s"] for r in sel if r["engine_steps"] > 1)
        spec = sum(r["backend"] == "speculative" for r in sel) / n
        cells.append(f"{n}, {e2e:.2f}, {ttft:.2f}, {1000 * dec / max(steps, 1):.0f}, {100 * spec:.0f}%")
    print(f"| {w}-{w + 5} | " + " | ".join(cells) + " |")
for label, _ in runs:
    rows = [r for _, r in data[label]]
    print(f"\n{label}: {len(rows)} requests, mean e2e {sum(r['observed_s'] for r in rows) / len(rows):.3f} s")
