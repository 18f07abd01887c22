#!/bin/bash
cd /tmp/w38i
while ! grep -q CHAIN2DONE chain2.out; do sleep 10; done
./one.sh snap-br1 clair-br1--azure-code-b-x2--4+4 azure-code-b-x2 4xbaseline,4xspeculative clairvoyant --seed 21 > /dev/null
./one.sh snap-semiT semiT--azure-code-b-x2--4+4 azure-code-b-x2 4xbaseline,4xspeculative clairvoyant --seed 21 > /dev/null
./one.sh snap-semiT semiT--azure-conv-b--1+1 azure-conv-b baseline,speculative clairvoyant --seed 21 > /dev/null
./one.sh snap-br1 clair-br1--azure-conv-b--1+1 azure-conv-b baseline,speculative clairvoyant --seed 21 > /dev/null
echo CHAIN3DONE
