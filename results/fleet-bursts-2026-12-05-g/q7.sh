#!/bin/bash
cd /tmp/w38p
./one.sh snap-br ab-br--azure-code-b-x2--4+4--s2 azure-code-b-x2 4xbaseline,4xspeculative adaptive --seed 2 --repeat 2
./one.sh snap-main ab-main--azure-code-b-x2--4+4--s2 azure-code-b-x2 4xbaseline,4xspeculative adaptive --seed 2 --repeat 2
./one.sh snap-main ab-main--azure-code-a--2+2--s2 azure-code-a 2xbaseline,2xspeculative adaptive --seed 2 --repeat 2
./one.sh snap-br ab-br--azure-code-a--2+2--s2 azure-code-a 2xbaseline,2xspeculative adaptive --seed 2 --repeat 2
echo Q7DONE
