#!/bin/bash
# one GPU, bursty, h200-ngram: versions given back to back, 3 seeds each
cd /work/wt/w38c/runs/f
S=/work/wt/w38c/.venv/bin/specgate
for v in "$@"; do
  echo "$v start $(date -u +%T) $(uptime)" >> out1/bursty.uptime
  PYTHONPATH=$PWD/snap-$v $S bench --workload bursty --time-scale 1 --profile h200-ngram --policies adaptive --repeat 3 --seed 1 --out out1/$v--bursty--1gpu--adaptive.json > out1/$v--bursty.log 2>&1
  echo "$v end $(date -u +%T) $(uptime)" >> out1/bursty.uptime
done
