#!/bin/bash
# usage: pub2.sh LANE : more public-trace windows (never looked at before running) on the one-GPU pair, as pub.sh
lane=$1; i=0
for w in azure-code-w300 azure-code-w1200 azure-code-w1800 azure-conv-w1200 azure-conv-w2400 mooncake-w1200 mooncake-w2400; do
  for job in "B baseline 1" "S speculative 1" "m7 adaptive 1" "m7 adaptive 2"; do
    set -- $job
    if [ $((i % 2)) = $lane ]; then bash /tmp/l37f/cell.sh $1 $2 /tmp/l37f/snap-main7 h200-ngram 1 /tmp/l37f/pub/$w.jsonl $3; fi
    i=$((i+1))
  done
done
