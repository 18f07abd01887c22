#!/bin/bash
cd /tmp/w38l
F22="--time-scale 1 --fleet 2xbaseline,2xspeculative"
F44="--time-scale 1 --fleet 4xbaseline,4xspeculative"
./bench1.sh snap-main main-m3-s34 --workload win/m3.jsonl $F22 --policies adaptive,least_loaded --repeat 2 --seed 3
./bench1.sh snap-main w05-m3-s34 --workload win/m3.jsonl $F22 --policies adaptive --repeat 2 --seed 3 --gateway-env SPECGATE_TTFT_WEIGHT=0.5
./bench1.sh snap-main main-m4-44-s12 --workload win/m4.jsonl $F44 --policies adaptive,least_loaded --repeat 2 --seed 1
./bench1.sh snap-main w05-m4-44-s12 --workload win/m4.jsonl $F44 --policies adaptive --repeat 2 --seed 1 --gateway-env SPECGATE_TTFT_WEIGHT=0.5
./bench1.sh snap-main main-mb-s12 --workload win/mooncake-b.jsonl $F22 --policies adaptive --repeat 2 --seed 1
./bench1.sh snap-main w05-mb-s12 --workload win/mooncake-b.jsonl $F22 --policies adaptive --repeat 2 --seed 1 --gateway-env SPECGATE_TTFT_WEIGHT=0.5
