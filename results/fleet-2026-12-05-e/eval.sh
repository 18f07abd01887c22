#!/bin/bash
# usage: eval.sh CELL... (CELL = workload:fleet:mapname)
cd /work/wt/w38c/runs
S=/work/wt/w38c/.venv/bin/specgate
PEERS=vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware
for cell in "$@"; do
  W=${cell%%:*}; rest=${cell#*:}; F=${rest%%:*}; M=${rest#*:}
  case $F in 1+1) FL=baseline,speculative;; 2+2) FL=2xbaseline,2xspeculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  tag=$W--$F
  for v in base after; do
    echo "$v start $(date -u +%T) $(uptime)" >> out/$tag.uptime
    PYTHONPATH=$PWD/snap-$v $S bench --workload $W.jsonl --time-scale 1 --fleet $FL --policies adaptive --repeat 3 --seed 1 --out out/$v--$tag--adaptive.json > out/$v--$tag--adaptive.log 2>&1
    echo "$v end $(date -u +%T) $(uptime)" >> out/$tag.uptime
  done
  echo "peers start $(date -u +%T) $(uptime)" >> out/$tag.uptime
  PYTHONPATH=$PWD/snap-after $S bench --workload $W.jsonl --time-scale 1 --fleet $FL --policies hindsight --gateway-env SPECGATE_HINDSIGHT_MAP=$(cat map--$M.txt) --peers $PEERS --out out/peers--$tag.json > out/peers--$tag.log 2>&1
  echo "peers end $(date -u +%T) $(uptime)" >> out/$tag.uptime
done
echo ALLDONE
