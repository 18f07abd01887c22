"""Analysis helper of results/idle-step-2026-12-05-f (see README)."""

import collections
import json
import statistics
import sys

for p in sys.argv[1:]:
    b = collections.defaultdict(list)
    with open(p) as fh:
        lines = fh.readlines()
    for line in lines:
        d = json.loads(line)
        if d.get("event") != "request" or not d.get("engine_steps") or d["engine_steps"] < 4:
            continue
        L = d["load_self"] + sum(x for _, x in d.get("co_runners", []))
        k = min(int(L // 2) * 2, 14)
        b[k].append((d["observed_s"] - d["ttft_s"]) / (d["engine_steps"] - 1))
    print(
        p.split("/")[-1][:30],
        " ".join(f"L{k}:{statistics.median(v) * 1e3:.2f}({len(v)})" for k, v in sorted(b.items())),
    )
