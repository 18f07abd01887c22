# ruff: noqa  -- a quick analysis script, kept as it ran
"""leadscan.py LOG...: per gateway DEBUG log, the regime records where the old rule (evidence less hope-minus-evidence)
and the new one (evidence less the lead on one window) read `sure` differently, and the first switch."""
import json, sys, gzip
for path in sys.argv[1:]:
    op = gzip.open if path.endswith(".gz") else open
    rows = [json.loads(l) for l in op(path, "rt") if '"regime_update"' in l]
    first = next((r["n"] for r in rows if r["state"]["role"] == "speculative"), None)
    diff = []
    for r in rows:
        s = r["state"]
        if s["evidence"] is None or "lead" not in s or s["role"] != "baseline":
            continue
        ev, hope, lead = s["evidence"], s["ratio"], s["lead"]
        old = ev > 1.05 and ev - max(hope - ev, 0) > 1
        new = ev > 1.05 and ev - lead > 1
        if old != new:
            diff.append((r["n"], round(ev, 3), round(hope, 3), round(hope - ev, 3), round(lead, 3)))
    print(path.split("/")[-2] if "-logs" in path else path, "first speculative at", first, "differ:", diff[:8], len(diff))
