#!/bin/bash
# usage: c37-lane.sh NEWTAG SNAP CELL... : re-run each w1 cell as NEWTAG from SNAP, one cell per lock hold
new=$1; snap=$2; shift 2
cd /tmp/l37f
for cell in "$@"; do
  [ -f /tmp/l37f/ev/$new--$cell.json ] && continue
  echo "start $cell $(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
  flock /tmp/bench.lock /work/main/.venv/bin/python rerun.py w1 $new $snap 0 1 "w1--${cell//./\\.}\.json"
  echo "end $cell $(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"
done
