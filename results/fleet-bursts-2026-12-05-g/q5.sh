#!/bin/bash
# one GPU (default: one h200-ngram pair), bursty: main then branch
cd /tmp/w38p
for v in main br; do
  echo "onegpu-$v start $(date -u +%T) $(uptime)" >> out/runs.uptime
  PYTHONPATH=/tmp/w38p/snap-$v /work/wt/w38b/.venv/bin/python -m gateway bench --workload bursty --policies baseline,speculative,adaptive --time-scale 1 --seed 1 --out out/onegpu-$v--bursty.json > out/onegpu-$v--bursty.log 2>&1
  echo "onegpu-$v end $(date -u +%T) $(uptime)" >> out/runs.uptime
  grep -A6 "┃ policy" out/onegpu-$v--bursty.log | grep "│"
done
echo Q5DONE
