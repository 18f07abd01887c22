#!/bin/bash
cd /work/wt/w38c/runs/f
while pgrep -f "runs/f/fix1as.sh" > /dev/null; do sleep 5; done
S=/work/wt/w38c/.venv/bin/specgate
mkdir -p peers2
echo "peers start $(date -u +%T) $(uptime)" >> peers2/azure-code-b--1+1.uptime
PYTHONPATH=$PWD/snap-main $S bench --workload ../azure-code-b.jsonl --time-scale 1 --fleet baseline,speculative --policies "" --peers vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware --out peers2/peers--azure-code-b--1+1.json > peers2/peers.log 2>&1
echo "peers end $(date -u +%T) $(uptime)" >> peers2/azure-code-b--1+1.uptime
