#!/bin/bash
# usage: one.sh SNAP TAG WORKLOAD FLEET POLICIES [extra...]
cd /tmp/w38i
SNAP=$1; TAG=$2; W=$3; F=$4; P=$5; shift 5
echo "$TAG $SNAP $W $F $P start $(date -u +%T) $(uptime)" >> out/runs.uptime
PYTHONPATH=/tmp/w38i/$SNAP /work/wt/w38c/.venv/bin/python -m gateway bench --workload $W.jsonl --time-scale 1 --fleet $F --policies $P "$@" --out out/$TAG.json > out/$TAG.log 2>&1
echo "$TAG end $(date -u +%T) $(uptime)" >> out/runs.uptime
grep -A12 "┃ policy" out/$TAG.log | grep "│"
