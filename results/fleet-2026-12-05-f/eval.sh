#!/bin/bash
# usage: eval.sh CELL... (CELL = workload:fleet). Per cell: main adaptive 3 seeds, then statics + hindsight + 3 peers in one bench.
cd /work/wt/w38c/runs/f
S=/work/wt/w38c/.venv/bin/specgate
PEERS=vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware
for cell in "$@"; do
  W=${cell%%:*}; F=${cell#*:}
  case $F in 1+1) FL=baseline,speculative; ST=2;; 2+2) FL=2xbaseline,2xspeculative; ST=4;; 4+4) FL=4xbaseline,4xspeculative; ST=8;; esac
  tag=$W--$F
  echo "main start $(date -u +%T) $(uptime)" >> out/$tag.uptime
  PYTHONPATH=$PWD/snap-main $S bench --workload ../$W.jsonl --time-scale 1 --fleet $FL --policies adaptive --repeat 3 --seed 1 --out out/main--$tag--adaptive.json > out/main--$tag--adaptive.log 2>&1
  echo "main end / peers start $(date -u +%T) $(uptime)" >> out/$tag.uptime
  PYTHONPATH=$PWD/snap-main $S bench --workload ../$W.jsonl --time-scale 1 --fleet $FL --policies least_loaded@${ST}xbaseline,least_loaded@${ST}xspeculative,hindsight --peers $PEERS --out out/peers--$tag.json > out/peers--$tag.log 2>&1
  echo "peers end $(date -u +%T) $(uptime)" >> out/$tag.uptime
done
echo ALLDONE
