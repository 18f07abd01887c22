#!/bin/bash
# held-out: main vs len3 on seeds 13-15 (all-structured), peers once (seed 13), mixed cells seed 13
R=/work/wt/w38c/runs/g
S=/work/wt/w38c/.venv/bin/specgate
cd /tmp/w38h
$R/ab.sh "main len3" "13 14 15" all-structured-code-a:1+1
mkdir -p $R/peers
echo "peers start $(date -u +%T) $(uptime)" >> $R/peers/all-structured-code-a--1+1.uptime
PYTHONPATH=$R/snap-main $S bench --workload /work/wt/w38c/runs/all-structured-code-a.jsonl --time-scale 1 --fleet baseline,speculative --seed 13 \
  --policies least_loaded@2xbaseline,least_loaded@2xspeculative --peers vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware \
  --out $R/peers/peers--all-structured-code-a--1+1--s13.json > $R/peers/peers--all-structured-code-a--1+1--s13.log 2>&1
echo "peers end $(date -u +%T) $(uptime)" >> $R/peers/all-structured-code-a--1+1.uptime
python3 -c "
import json;d=json.load(open('$R/peers/peers--all-structured-code-a--1+1--s13.json'))
for k,x in d['policies'].items(): print('peers', k, x['summary']['mean_e2e_s'])"
$R/ab.sh "main len3" "13" azure-code-b:1+1 azure-conv-b:1+1
echo EVALDONE
