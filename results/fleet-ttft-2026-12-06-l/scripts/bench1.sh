#!/bin/bash
# usage: bench1.sh SNAP OUTTAG -- bench args...
snap=$1; tag=$2; shift 2
cd /tmp/w38l
echo "$(date -u +%T) start $tag load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
flock /tmp/bench.lock env PYTHONPATH=/tmp/w38l/$snap timeout 1500 /work/main/.venv/bin/python -m gateway bench "$@" --out runs/$tag.json > runs/$tag.stdout 2>&1
rc=$?
echo "$(date -u +%T) end $tag rc $rc load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
