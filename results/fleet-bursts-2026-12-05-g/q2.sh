#!/bin/bash
cd /tmp/w38p
./one.sh snap-br ab-br--azure-code-b--1+1 azure-code-b baseline,speculative adaptive --seed 1 --repeat 3
./one.sh snap-br ab-br--azure-conv-b--1+1 azure-conv-b baseline,speculative adaptive --seed 1 --repeat 3
./one.sh snap-main ab-main--azure-conv-b--1+1 azure-conv-b baseline,speculative adaptive --seed 1 --repeat 3
echo Q2DONE
