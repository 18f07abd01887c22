#!/bin/bash
cd /tmp/w38i
./ab.sh "main2 merged" "22" azure-code-a:2+2
./onegpu.sh main2 merged
echo CHAIN4DONE
