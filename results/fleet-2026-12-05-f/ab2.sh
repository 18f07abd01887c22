#!/bin/bash
# main against fix2 interleaved seed by seed (seeds 7-9, never looked at), order alternating per seed
cd /work/wt/w38c/runs/f
S=/work/wt/w38c/.venv/bin/specgate
for cell in "$@"; do
  W=${cell%%:*}; F=${cell#*:}
  case $F in 1+1) FL=baseline,speculative;; 2+2) FL=2xbaseline,2xspeculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  tag=$W--$F
  for seed in 7 8 9; do
    if [ $((seed % 2)) -eq 1 ]; then order="main fix2"; else order="fix2 main"; fi
    for v in $order; do
      echo "$v $seed start $(date -u +%T) $(uptime)" >> ab2/$tag.uptime
      PYTHONPATH=$PWD/snap-$v $S bench --workload ../$W.jsonl --time-scale 1 --fleet $FL --policies adaptive --seed $seed --out ab2/$v--$tag--s$seed.json > ab2/$v--$tag--s$seed.log 2>&1
    done
  done
  echo "end $(date -u +%T) $(uptime)" >> ab2/$tag.uptime
done
echo ALLDONE
