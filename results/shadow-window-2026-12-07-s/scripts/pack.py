# ruff: noqa  -- a quick analysis script, kept as it ran
"""pack.py EV_DIR OUT.json.gz: every bench run in EV_DIR (TAG--KEY.json) as {tag, cell, policy, mean_e2e_s,
speculative_share, date, command}; the per-request logs stay out (they are the gateway's own, tens of MB)."""
import glob, gzip, json, os, sys
rows = []
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*--*.json"))):
    tag, cell = os.path.basename(path)[:-5].split("--", 1)
    d = json.load(open(path))
    for pol, p in d["policies"].items():
        for r in p["runs"]:
            rows.append({"tag": tag, "cell": cell, "policy": pol, "mean_e2e_s": r["mean_e2e_s"],
                         "speculative_share": r.get("speculative_share"), "date": d.get("date"), "command": d.get("command")})
with gzip.open(sys.argv[2], "wt") as fh:
    json.dump(rows, fh, indent=0)
print(len(rows), "runs")
