#!/bin/bash
cd /tmp/w38p
S=/work/wt/w38b/.venv/bin/python
for cell in azure-code-a:2xbaseline,2xspeculative azure-code-b-x2:4xbaseline,4xspeculative; do
  W=${cell%%:*}; F=${cell#*:}
  echo "$W start $(date -u +%T) $(uptime)" >> out/clair.uptime
  PYTHONPATH=/tmp/w38p/snap-main $S -m gateway bench --workload $W.jsonl --time-scale 1 --fleet $F --policies clairvoyant,adaptive --seed 1 --out out/clair-main--$W.json > out/clair-main--$W.log 2>&1
  echo "$W end $(date -u +%T) $(uptime)" >> out/clair.uptime
done
echo DONE
