#!/bin/bash
R=/work/wt/w38c/runs/g
S=/work/wt/w38c/.venv/bin/specgate
cd /tmp/w38h
$R/onegpu.sh main len3
for W in azure-code-b azure-conv-b; do
  echo "peers start $(date -u +%T) $(uptime)" >> $R/peers/$W--1+1.uptime
  PYTHONPATH=$R/snap-main $S bench --workload /work/wt/w38c/runs/$W.jsonl --time-scale 1 --fleet baseline,speculative --seed 13 \
    --policies least_loaded@2xbaseline,least_loaded@2xspeculative --peers vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware \
    --out $R/peers/peers--$W--1+1--s13.json > $R/peers/peers--$W--1+1--s13.log 2>&1
  echo "peers end $(date -u +%T) $(uptime)" >> $R/peers/$W--1+1.uptime
  python3 -c "
import json;d=json.load(open('$R/peers/peers--$W--1+1--s13.json'))
for k,x in d['policies'].items(): print('peers $W', k, x['summary']['mean_e2e_s'])"
done
$R/ab.sh "main len3" "14" azure-code-b:1+1 azure-conv-b:1+1
echo EVAL2DONE
