#!/bin/bash
cd /tmp/w38p
S=/work/wt/w38b/.venv/bin/python
for W in azure-code-b azure-conv-b; do
  echo "$W start $(date -u +%T) $(uptime)" >> out/clair.uptime
  PYTHONPATH=/tmp/w38p/snap-main $S -m gateway bench --workload $W.jsonl --time-scale 1 --fleet baseline,speculative --policies clairvoyant --seed 1 --out out/clair-main--$W.json > out/clair-main--$W.log 2>&1
  echo "$W end $(date -u +%T) $(uptime)" >> out/clair.uptime
done
echo DONE
