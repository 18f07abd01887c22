# ruff: noqa  -- a quick analysis script, kept as it ran
"""Copy the runs into raw/: bench JSON gzipped without `true_load`, the gateway's request log lines gzipped.

usage: pack.py RUNS_DIR RAW_DIR TAG...
"""
import gzip, json, os, re, sys

runs, raw, tags = sys.argv[1], sys.argv[2], set(sys.argv[3:])
os.makedirs(raw, exist_ok=True)
for f in sorted(os.listdir(runs)):
    m = re.match(r"(.+?)--(.+?)--s(\d+)\.json$", f)
    if not m or m.group(1) not in tags:
        continue
    doc = json.load(open(os.path.join(runs, f)))
    for p in doc["policies"].values():
        p.pop("true_load", None)
    with gzip.open(os.path.join(raw, f + ".gz"), "wt") as out:
        json.dump(doc, out, separators=(",", ":"))
    log = os.path.join(runs, f[:-5] + "-logs", "gateway-adaptive.log")
    if os.path.exists(log):
        with open(log) as src, gzip.open(os.path.join(raw, f[:-5] + "-gateway.log.gz"), "wt") as out:
            for line in src:
                if '"event":"request"' in line or '"event": "request"' in line:
                    out.write(line)
