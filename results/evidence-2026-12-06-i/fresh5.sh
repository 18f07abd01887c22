#!/bin/bash
# usage: fresh5.sh : statics B, S, main (m6) and branch (dh) adaptive on members 500-507 (generated 2026-12-06 after the code), h200-ngram, x1, seed 1
for n in 500 501 502 503 504 505 506 507; do
  w=/tmp/lead37/wl5/bursty-$n.jsonl
  bash /tmp/l37f/cell.sh B baseline /tmp/l37f/snap-main6 h200-ngram 1 $w 1
  bash /tmp/l37f/cell.sh S speculative /tmp/l37f/snap-main6 h200-ngram 1 $w 1
  bash /tmp/l37f/cell.sh dh adaptive /tmp/l37f/snap-dh h200-ngram 1 $w 1
  bash /tmp/l37f/cell.sh m6 adaptive /tmp/l37f/snap-main6 h200-ngram 1 $w 1
done
