#!/bin/bash
lane=$1
bash cell.sh pr adaptive /tmp/l37f/snap-pr h200-ngram 1 /tmp/l37f/pub/azure-conv-c.jsonl $((lane+1))
bash cell.sh pr adaptive /tmp/l37f/snap-pr h200-ngram 1 /tmp/l37f/pub/azure-code-w300.jsonl $((lane+1))
python3 rerun.py dh pr /tmp/l37f/snap-pr $lane 2 'demo-mixed|mixed-phases|structured-heavy|bursty--x1|mixed-low|creative-heavy|bursty-50|bursty-20[1-4]'
