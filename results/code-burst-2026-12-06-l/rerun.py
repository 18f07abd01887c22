# ruff: noqa  -- a quick analysis script, kept as it ran
"""rerun.py OLD NEW SNAP LANE NLANES [FILTER]: re-run every adaptive cell of tag OLD as tag NEW from snapshot SNAP."""
import glob, json, os, shlex, subprocess, sys, time
old, new, snap, lane, nl = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
flt = sys.argv[6] if len(sys.argv) > 6 else ""
import re
paths = sorted(p for p in glob.glob(f"/tmp/l37f/ev/{old}--*.json") if re.search(flt, p))
# big/important first: the diagnosed cells
pri = ["510", "501", "mixed-medium", "demo-mixed", "mixed-phases"]
paths.sort(key=lambda p: min([i for i, k in enumerate(pri) if k in p] or [99]))
for i, p in enumerate(paths):
    if i % nl != lane:
        continue
    out = p.replace(f"/{old}--", f"/{new}--")
    if os.path.exists(out):
        continue
    argv = shlex.split(json.load(open(p))["command"])
    j = argv.index("--out"); argv[j + 1] = out
    argv[0] = "/work/main/.venv/bin/specgate"
    env = dict(os.environ, PYTHONPATH=snap)
    for e in os.environ.get("EXTRA", "").split():
        argv += ["--gateway-env", e]
    with open(out + ".log", "w") as log:
        subprocess.run(argv, env=env, stdout=log, stderr=subprocess.STDOUT, cwd="/tmp/l37f")
    with open("/tmp/l37f/ev/done.log", "a") as fh:
        fh.write(f"{time.strftime('%T')} {new} {os.path.basename(out)} load {open('/proc/loadavg').read()[:14]}\n")
