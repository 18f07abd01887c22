# ruff: noqa  -- a quick analysis script, kept as it ran
"""pack.py: this round's bench runs in /tmp/l37f/ev (its tags, and the statics of the workloads new here) as
{tag, cell, policy, mean_e2e_s, speculative_share, date, command} into raw/runs.json.gz (round s's pack.py, filtered)."""
import glob, gzip, json, os
tags = {"a0d","a1d","a2d","a3d","a4d","a2","a4","b0","b1","c0","c1","d1","d1d","e1","mn"}
new_static = ("1100","1101","1102","1103","1104","1105","1106","1107","dynk")
rows = []
for path in sorted(glob.glob("/tmp/l37f/ev/*--*.json")):
    tag, cell = os.path.basename(path)[:-5].split("--", 1)
    if tag not in tags and not (tag in ("B","S") and any(s in cell for s in new_static)):
        continue
    d = json.load(open(path))
    for pol, p in d["policies"].items():
        for r in p["runs"]:
            rows.append({"tag": tag, "cell": cell, "policy": pol, "mean_e2e_s": r["mean_e2e_s"],
                         "speculative_share": r.get("speculative_share"), "date": d.get("date"), "command": d.get("command")})
with gzip.open("raw/runs.json.gz", "wt") as fh:
    json.dump(rows, fh, indent=0)
print(len(rows))
