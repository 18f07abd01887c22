#!/bin/bash
cd /tmp/w38p
./one.sh snap-main ab-main--azure-code-b--1+1 azure-code-b baseline,speculative adaptive --seed 1 --repeat 3
./one.sh snap-main var-nothompson--azure-code-b--1+1 azure-code-b baseline,speculative adaptive --seed 1 --repeat 3 --gateway-env SPECGATE_THOMPSON_SAMPLING=false
echo Q1DONE
