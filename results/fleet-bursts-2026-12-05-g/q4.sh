#!/bin/bash
cd /tmp/w38p
while ! grep -q Q3DONE q3.out; do sleep 5; done
E="--gateway-env SPECGATE_THOMPSON_SAMPLING=false"
./one.sh snap-main var-nothompson--azure-conv-b--1+1 azure-conv-b baseline,speculative adaptive --seed 1 --repeat 3 $E
./one.sh snap-main var-nothompson--azure-code-a--2+2 azure-code-a 2xbaseline,2xspeculative adaptive --seed 1 $E
./one.sh snap-main var-nothompson--azure-code-b-x2--4+4 azure-code-b-x2 4xbaseline,4xspeculative adaptive --seed 1 $E
./one.sh snap-main var-nothompson--azure-code-b--1+1--s4 azure-code-b baseline,speculative adaptive --seed 4 --repeat 3 $E
./one.sh snap-main ab-main--azure-code-b--1+1--s4 azure-code-b baseline,speculative adaptive --seed 4 --repeat 3
echo Q4DONE
