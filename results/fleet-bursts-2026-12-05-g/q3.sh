#!/bin/bash
cd /tmp/w38p
while ! grep -q Q2DONE q2.out; do sleep 5; done
PEERS=vllm-router:cache_aware,vllm-router:power_of_two,sglang-router:cache_aware
./one.sh snap-br ab-br--azure-code-a--2+2 azure-code-a 2xbaseline,2xspeculative adaptive --seed 1
./one.sh snap-main ab-main--azure-code-a--2+2 azure-code-a 2xbaseline,2xspeculative adaptive --seed 1
./one.sh snap-main ab-main--azure-code-b-x2--4+4 azure-code-b-x2 4xbaseline,4xspeculative adaptive --seed 1
./one.sh snap-br ab-br--azure-code-b-x2--4+4 azure-code-b-x2 4xbaseline,4xspeculative adaptive --seed 1
./one.sh snap-main peers--azure-code-b--1+1 azure-code-b baseline,speculative least_loaded --peers $PEERS
./one.sh snap-main peers--azure-conv-b--1+1 azure-conv-b baseline,speculative least_loaded --peers $PEERS
./one.sh snap-main peers--azure-code-a--2+2 azure-code-a 2xbaseline,2xspeculative least_loaded --peers $PEERS
./one.sh snap-main peers--azure-code-b-x2--4+4 azure-code-b-x2 4xbaseline,4xspeculative least_loaded --peers $PEERS
echo Q3DONE
