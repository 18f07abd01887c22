#!/bin/bash
# after (fe7c6c4) against after2 (0df7c2e, + the max_tokens level), then the peers again; then one GPU after2
cd /work/wt/w38c/runs
S=/work/wt/w38c/.venv/bin/specgate
PEERS=vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware
for cell in all-structured-code-a:1+1:all-structured-code-a--1+1 azure-code-a:2+2:azure-code-a--2+2; do
  W=${cell%%:*}; rest=${cell#*:}; F=${rest%%:*}; M=${rest#*:}
  case $F in 1+1) FL=baseline,speculative;; 2+2) FL=2xbaseline,2xspeculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  tag=$W--$F
  for v in after after2; do
    echo "$v start $(date -u +%T) $(uptime)" >> out2/$tag.uptime
    PYTHONPATH=$PWD/snap-$v $S bench --workload $W.jsonl --time-scale 1 --fleet $FL --policies adaptive --repeat 3 --seed 1 --out out2/$v--$tag--adaptive.json > out2/$v--$tag--adaptive.log 2>&1
    echo "$v end $(date -u +%T) $(uptime)" >> out2/$tag.uptime
  done
  echo "peers start $(date -u +%T) $(uptime)" >> out2/$tag.uptime
  PYTHONPATH=$PWD/snap-after2 $S bench --workload $W.jsonl --time-scale 1 --fleet $FL --policies hindsight --gateway-env SPECGATE_HINDSIGHT_MAP=$(cat map--$M.txt) --peers $PEERS --out out2/peers--$tag.json > out2/peers--$tag.log 2>&1
  echo "peers end $(date -u +%T) $(uptime)" >> out2/$tag.uptime
done
tag=bursty--1gpu
echo "after2 start $(date -u +%T) $(uptime)" >> out2/$tag.uptime
PYTHONPATH=$PWD/snap-after2 $S bench --workload bursty --time-scale 1 --profile h200-ngram --policies adaptive --repeat 3 --seed 1 --out out2/after2--$tag--adaptive.json > out2/after2--$tag--adaptive.log 2>&1
echo "after2 end $(date -u +%T) $(uptime)" >> out2/$tag.uptime
echo ALLDONE
