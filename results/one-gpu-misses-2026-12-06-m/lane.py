# ruff: noqa  -- a quick analysis script, kept as it ran
"""lane.py TAG SNAP JOBFILE [ENV...]: each line of JOBFILE is `SRC_CELL_JSON SEED`; re-run that cell's command at SEED as
TAG from snapshot SNAP, one cell per bench slot (/tmp/m37/fslot.sh), skipping outputs that exist."""
import json, os, shlex, subprocess, sys, time
tag, snap, jobs = sys.argv[1:4]
envs = sys.argv[4:]
for line in open(jobs):
    if not line.strip():
        continue
    p, seed = line.split()
    src = os.path.basename(p).split("--", 1)[0]
    argv = shlex.split(json.load(open(p))["command"])
    argv[0] = "/work/main/.venv/bin/specgate"
    argv[argv.index("--seed") + 1] = seed
    key = os.path.basename(p)[len(src) + 2:-5].rsplit("--s", 1)[0] + f"--s{seed}"
    out = f"/tmp/l37f/ev/{tag}--{key}.json"
    if os.path.exists(out):
        continue
    argv[argv.index("--out") + 1] = out
    for e in envs:
        argv += ["--gateway-env", e]
    t0, la = time.strftime('%T'), open('/proc/loadavg').read()[:14]
    with open(out + ".log", "w") as log:
        subprocess.run(["/tmp/m37/fslot.sh", *argv], env=dict(os.environ, PYTHONPATH=snap), stdout=log,
                       stderr=subprocess.STDOUT, cwd="/tmp/l37f")
    with open("/tmp/l37f/ev/done.log", "a") as fh:
        fh.write(f"{time.strftime('%T')} {tag} {os.path.basename(out)} start {t0} load {la} -> {open('/proc/loadavg').read()[:14]}\n")
