#!/bin/bash
cd /tmp/w38i
while ! grep -q PEERSDONE peers.out; do sleep 10; done
./ab.sh "main br1" "21" azure-code-a:2+2 azure-code-b-x2:4+4 azure-code-b:1+1 azure-conv-b:1+1
