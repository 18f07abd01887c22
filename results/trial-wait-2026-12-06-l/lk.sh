#!/bin/bash
# lk.sh OLD NEW SNAP FILTER [ENV=V ...]: rerun.py under the shared bench lock, one cell at a time
old=$1; new=$2; snap=$3; flt=$4; shift 4
cd /tmp/l37f
for p in $(ls ev/$old--*.json | grep -E "$flt"); do
  EXTRA="$*" flock /tmp/bench.lock /work/main/.venv/bin/python rerun.py $old $new $snap 0 1 "$(basename $p .json)\.json"
done
