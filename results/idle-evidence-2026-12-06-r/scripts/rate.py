# ruff: noqa  -- a quick analysis script, kept as it ran
"""rate.py FILE...: arrivals per 5-s bin (the workload's own clock)."""
import json, sys, collections
for f in sys.argv[1:]:
    c = collections.Counter(int(json.loads(l)["t"] // 5) for l in open(f))
    print(f.split("/")[-1], " ".join(str(c.get(i, 0)) for i in range(max(c) + 1)))
