# ruff: noqa  -- a quick analysis script, kept as it ran
"""pack.py: this round's bench runs (one GPU: /tmp/l37f/ev, its tags and the statics of the members new here;
fleets: /tmp/f39/ev) as {tag, cell, policy, mean_e2e_s, mean_ttft_s, speculative_share, date, command} into
raw/runs.json.gz (round u's pack.py, with the fleet folder)."""
import glob, gzip, json, os
tags = {"w1", "w9", "h5", "mf9", "g0f", "lt1", "m1d9", "d1230", "su1"}
rows = []
for path in sorted(glob.glob("/tmp/l37f/ev/*--*.json")):
    tag, cell = os.path.basename(path)[:-5].split("--", 1)
    new = "bursty-12" in cell
    if not ((tag in tags and (tag != "w1" or new)) or (tag in ("B", "S") and new)):
        continue
    d = json.load(open(path))
    for pol, p in d["policies"].items():
        for r in p["runs"]:
            rows.append({"tag": tag, "cell": cell, "policy": pol, "mean_e2e_s": r["mean_e2e_s"],
                         "speculative_share": r.get("speculative_share"), "date": d.get("date"), "command": d.get("command")})
for path in sorted(glob.glob("/tmp/f39/ev/*--*.json")):
    tag, cell = os.path.basename(path)[:-5].split("--", 1)
    d = json.load(open(path))
    for pol, p in d["policies"].items():
        s = p["summary"]
        rows.append({"tag": tag, "cell": "fleet--" + cell, "policy": pol, "mean_e2e_s": s["mean_e2e_s"],
                     "mean_ttft_s": s.get("mean_ttft_s"), "errors": s["errors"],
                     "speculative_share": (p.get("runs") or [{}])[0].get("speculative_share"),
                     "date": d.get("date"), "command": d.get("command")})
with gzip.open(os.path.join(os.path.dirname(__file__), "..", "raw", "runs.json.gz"), "wt") as fh:
    json.dump(rows, fh, indent=0)
print(len(rows))
