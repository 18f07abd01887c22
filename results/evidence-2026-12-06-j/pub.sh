#!/bin/bash
# usage: pub.sh LANE : public-trace windows on the one-GPU pair (h200-ngram, x1): statics seed 1, adaptive seeds 1-2 (main 1890e36)
lane=$1; i=0
for w in azure-code-a azure-conv-a mooncake-a azure-code-burst azure-conv-b azure-conv-c; do
  for job in "B baseline 1" "S speculative 1" "m7 adaptive 1" "m7 adaptive 2"; do
    set -- $job
    if [ $((i % 2)) = $lane ]; then bash /tmp/l37f/cell.sh $1 $2 /tmp/l37f/snap-main7 h200-ngram 1 /tmp/l37f/pub/$w.jsonl $3; fi
    i=$((i+1))
  done
done
