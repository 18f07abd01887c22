#!/bin/bash
cd /tmp/w38l
F22="--time-scale 1 --fleet 2xbaseline,2xspeculative"
F44="--time-scale 1 --fleet 4xbaseline,4xspeculative"
./bench1.sh snap-main main-mb-s3 --workload win/mooncake-b.jsonl $F22 --policies adaptive --repeat 1 --seed 3
./bench1.sh snap-fw fw-mb-s3 --workload win/mooncake-b.jsonl $F22 --policies adaptive --repeat 1 --seed 3
./bench1.sh snap-main main-m4-44-s3 --workload win/m4.jsonl $F44 --policies adaptive,least_loaded --repeat 1 --seed 3
./bench1.sh snap-fw fw-m4-44-s3 --workload win/m4.jsonl $F44 --policies adaptive --repeat 1 --seed 3
