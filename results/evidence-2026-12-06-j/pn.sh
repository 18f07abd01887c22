#!/bin/bash
lane=$1
if [ $lane = 0 ]; then
  bash cell.sh pn adaptive /tmp/l37f/snap-pn h200-ngram 1 /tmp/l37f/pub/azure-conv-c.jsonl 1
  python3 rerun.py dh pn /tmp/l37f/snap-pn 0 2 'demo-mixed|mixed-phases|structured-heavy|bursty--x1|mixed-low|creative-heavy|bursty-50|bursty-20[1-4]'
else
  bash cell.sh pn adaptive /tmp/l37f/snap-pn h200-ngram 1 /tmp/l37f/pub/azure-conv-c.jsonl 2
  python3 rerun.py dh pn /tmp/l37f/snap-pn 1 2 'demo-mixed|mixed-phases|structured-heavy|bursty--x1|mixed-low|creative-heavy|bursty-50|bursty-20[1-4]'
fi
