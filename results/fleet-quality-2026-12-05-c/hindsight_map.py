"""Print the hindsight (class, temperature bucket) -> role map of a stored bench cell, from its two static fleets'
per-request results (`gateway.bench.replay.run.hindsight_map`, as `specgate bench --policies ...,hindsight` computes
it in one run), as a SPECGATE_HINDSIGHT_MAP value:

    M=$(python hindsight_map.py results/peers-2026-12-05/cells/cell--W--2+2.json.gz)
    specgate bench --workload W --fleet 2xbaseline,2xspeculative --policies hindsight \\
      --gateway-env SPECGATE_HINDSIGHT_MAP=$M
"""

from __future__ import annotations

import gzip
import json
import sys

from gateway.bench.replay.run import hindsight_map

with gzip.open(sys.argv[1]) as f:
    doc = json.load(f)
statics = {n: p["requests"] for n, p in doc["policies"].items() if n.startswith("least_loaded@")}
print(",".join(f"{k}={v}" for k, v in sorted(hindsight_map(statics).items())))
