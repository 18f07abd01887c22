#!/bin/bash
cd /tmp/w38i
./ab.sh "main br1" "22 23 24" azure-code-a:2+2 azure-code-b-x2:4+4 azure-code-b:1+1 azure-conv-b:1+1
./onegpu.sh main br1
echo CHAIN2DONE
