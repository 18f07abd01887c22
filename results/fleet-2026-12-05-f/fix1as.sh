#!/bin/bash
cd /work/wt/w38c/runs/f
while kill -0 $(cat chain.pid) 2>/dev/null; do sleep 5; done
S=/work/wt/w38c/.venv/bin/specgate
for seed in 7 8 9; do
  echo "fix1 $seed start $(date -u +%T) $(uptime)" >> ab2/fix1-all-structured-code-a--1+1.uptime
  PYTHONPATH=$PWD/snap-fix1 $S bench --workload ../all-structured-code-a.jsonl --time-scale 1 --fleet baseline,speculative --policies adaptive --seed $seed --out ab2/fix1--all-structured-code-a--1+1--s$seed.json > ab2/fix1--all-structured-code-a--1+1--s$seed.log 2>&1
done
echo "end $(date -u +%T) $(uptime)" >> ab2/fix1-all-structured-code-a--1+1.uptime
