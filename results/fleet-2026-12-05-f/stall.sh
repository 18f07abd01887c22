#!/bin/bash
cd /work/wt/w38c/runs/f
S=/work/wt/w38c/.venv/bin/specgate
for cell in all-structured-code-a:1+1 azure-code-b:1+1; do
  W=${cell%%:*}; F=${cell#*:}
  for seed in 7 8 9; do
    echo "stall $seed start $(date -u +%T) $(uptime)" >> ab2/stall-$W--$F.uptime
    PYTHONPATH=$PWD/snap-stall $S bench --workload ../$W.jsonl --time-scale 1 --fleet baseline,speculative --policies adaptive --seed $seed --out ab2/stall--$W--$F--s$seed.json > ab2/stall--$W--$F--s$seed.log 2>&1
  done
done
echo "end $(date -u +%T) $(uptime)" >> ab2/stall-end.uptime
