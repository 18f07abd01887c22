#!/bin/bash
cd /tmp/w38l
while pgrep -f queue1.sh > /dev/null; do sleep 5; done
F22="--time-scale 1 --fleet 2xbaseline,2xspeculative"
./bench1.sh snap-main main-conva-s12 --workload win/azure-conv-a.jsonl $F22 --policies adaptive --repeat 2 --seed 1
./bench1.sh snap-fw fw-conva-s12 --workload win/azure-conv-a.jsonl $F22 --policies adaptive --repeat 2 --seed 1
./bench1.sh snap-main peer-conva-s12 --workload win/azure-conv-a.jsonl $F22 --policies= --peers vllm-router:cache_aware --repeat 2 --seed 1
./bench1.sh snap-main main-codea-s12 --workload win/azure-code-a.jsonl $F22 --policies adaptive --repeat 2 --seed 1
./bench1.sh snap-fw fw-codea-s12 --workload win/azure-code-a.jsonl $F22 --policies adaptive --repeat 2 --seed 1
./bench1.sh snap-main w1-m3-s34 --workload win/m3.jsonl --time-scale 1 --fleet 2xbaseline,2xspeculative --policies adaptive --repeat 2 --seed 3 --gateway-env SPECGATE_TTFT_WEIGHT=1
./bench1.sh snap-main main-pair-bursty --workload bursty --profile h200-ngram --policies adaptive
./bench1.sh snap-fw fw-pair-bursty --workload bursty --profile h200-ngram --policies adaptive
