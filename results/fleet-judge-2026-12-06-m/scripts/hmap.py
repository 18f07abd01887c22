# ruff: noqa  -- a quick analysis script, kept as it ran
# print SPECGATE_HINDSIGHT_MAP from stored static bench files (gz or json), each a fleet with one role
import gzip, json, sys
from gateway.bench.replay.run import hindsight_map
runs = {}
for path in sys.argv[1:]:
    op = gzip.open if path.endswith(".gz") else open
    with op(path) as f:
        doc = json.load(f)
    for n, p in doc["policies"].items():
        if n.startswith("least_loaded@"):
            runs[n] = p["requests"]
print(",".join(f"{k}={v}" for k, v in sorted(hindsight_map(runs).items())))
