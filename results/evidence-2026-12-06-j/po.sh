#!/bin/bash
for w in azure-code-w300 azure-conv-c azure-code-w1200; do for s in 1 2; do
  bash cell.sh po adaptive /tmp/l37f/snap-po h200-ngram 1 /tmp/l37f/pub/$w.jsonl $s
done; done
python3 rerun.py dh po /tmp/l37f/snap-po 0 1 'demo-mixed|mixed-phases|structured-heavy|bursty--x1|mixed-low|creative-heavy|bursty-50|bursty-20[1-4]'
