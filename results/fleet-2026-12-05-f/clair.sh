#!/bin/bash
cd /work/wt/w38c/runs/f
S=/work/wt/w38c/.venv/bin/specgate
for cell in azure-code-a:2+2 azure-code-b-x2:4+4; do
  W=${cell%%:*}; F=${cell#*:}
  case $F in 1+1) FL=baseline,speculative;; 2+2) FL=2xbaseline,2xspeculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  echo "clair start $(date -u +%T) $(uptime)" >> diag/clair-fix2--$W--$F.uptime
  PYTHONPATH=$PWD/snap-fix2 $S bench --workload ../$W.jsonl --time-scale 1 --fleet $FL --policies clairvoyant --seed 1 --out diag/clair-fix2--$W--$F.json > diag/clair-fix2--$W--$F.log 2>&1
  echo "clair end $(date -u +%T) $(uptime)" >> diag/clair-fix2--$W--$F.uptime
done
mkdir -p out1b && sed 's#out1/#out1b/#g' onegpu.sh > onegpu-b.sh && chmod +x onegpu-b.sh && ./onegpu-b.sh fix2 main
