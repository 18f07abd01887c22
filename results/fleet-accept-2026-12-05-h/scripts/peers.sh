#!/bin/bash
cd /tmp/w38i
P="--peers vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware"
./one.sh snap-main peers--azure-conv-b--1+1 azure-conv-b baseline,speculative least_loaded --seed 22 $P
./one.sh snap-main peers--azure-code-b--1+1 azure-code-b baseline,speculative least_loaded --seed 22 $P
./one.sh snap-main peers--azure-code-a--2+2 azure-code-a 2xbaseline,2xspeculative least_loaded --seed 22 $P
./one.sh snap-main peers--azure-code-b-x2--4+4 azure-code-b-x2 4xbaseline,4xspeculative least_loaded --seed 22 $P
echo PEERSDONE
