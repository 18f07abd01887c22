#!/bin/bash
cd /tmp/w38p
W=all-structured-code-a
./one.sh snap-br ab-br--$W--1+1 $W baseline,speculative adaptive --seed 1 --repeat 3
./one.sh snap-main ab-main--$W--1+1 $W baseline,speculative adaptive --seed 1 --repeat 3
./one.sh snap-main peers--$W--1+1 $W baseline,speculative least_loaded --peers vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware
echo Q8DONE
