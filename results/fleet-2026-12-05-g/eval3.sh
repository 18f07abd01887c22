#!/bin/bash
R=/work/wt/w38c/runs/g
S=/work/wt/w38c/.venv/bin/specgate
cd /tmp/w38h
while pgrep -f "runs/g/eval2.sh" >/dev/null; do sleep 5; done
W=all-structured-code-a
echo "peers s14 start $(date -u +%T) $(uptime)" >> $R/peers/$W--1+1.uptime
PYTHONPATH=$R/snap-main $S bench --workload /work/wt/w38c/runs/$W.jsonl --time-scale 1 --fleet baseline,speculative --seed 14 \
  --policies least_loaded@2xbaseline,least_loaded@2xspeculative --peers vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware \
  --out $R/peers/peers--$W--1+1--s14.json > $R/peers/peers--$W--1+1--s14.log 2>&1
echo "peers s14 end $(date -u +%T) $(uptime)" >> $R/peers/$W--1+1.uptime
python3 -c "
import json;d=json.load(open('$R/peers/peers--$W--1+1--s14.json'))
for k,x in d['policies'].items(): print('peers $W s14', k, x['summary']['mean_e2e_s'])"
$R/ab.sh "main len3" "15" azure-code-b:1+1 azure-conv-b:1+1
echo EVAL3DONE
