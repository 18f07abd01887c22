#!/bin/bash
# main against fix2, seeds 4-6 (held out: no seed >= 4 was looked at while tuning), back to back per cell, order alternating
cd /work/wt/w38c/runs/f
S=/work/wt/w38c/.venv/bin/specgate
i=0
for cell in "$@"; do
  W=${cell%%:*}; F=${cell#*:}
  case $F in 1+1) FL=baseline,speculative;; 2+2) FL=2xbaseline,2xspeculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  tag=$W--$F
  if [ $((i % 2)) -eq 0 ]; then order="main fix2"; else order="fix2 main"; fi
  i=$((i+1))
  for v in $order; do
    echo "$v start $(date -u +%T) $(uptime)" >> ab/$tag.uptime
    PYTHONPATH=$PWD/snap-$v $S bench --workload ../$W.jsonl --time-scale 1 --fleet $FL --policies adaptive --repeat 3 --seed 4 --out ab/$v--$tag--adaptive.json > ab/$v--$tag--adaptive.log 2>&1
    echo "$v end $(date -u +%T) $(uptime)" >> ab/$tag.uptime
  done
done
echo ALLDONE
