#!/bin/bash
# after against after2 back to back on the other cells (no peers)
cd /work/wt/w38c/runs
S=/work/wt/w38c/.venv/bin/specgate
for cell in all-structured-code-a-x2:4+4 azure-code-b:1+1 azure-conv-b:1+1; do
  W=${cell%%:*}; F=${cell#*:}
  case $F in 1+1) FL=baseline,speculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  tag=$W--$F
  for v in after after2; do
    echo "$v start $(date -u +%T) $(uptime)" >> out3/$tag.uptime
    PYTHONPATH=$PWD/snap-$v $S bench --workload $W.jsonl --time-scale 1 --fleet $FL --policies adaptive --repeat 3 --seed 1 --out out3/$v--$tag--adaptive.json > out3/$v--$tag--adaptive.log 2>&1
    echo "$v end $(date -u +%T) $(uptime)" >> out3/$tag.uptime
  done
done
echo ALLDONE
