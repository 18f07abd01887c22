#!/bin/bash
R=/work/wt/w38c/runs/g
cd /tmp/w38h
while pgrep -f "runs/g/eval3.sh" >/dev/null; do sleep 5; done
$R/onegpu.sh main2 merged
$R/ab.sh "main2 merged" "13" all-structured-code-a:1+1
echo EVAL4DONE
