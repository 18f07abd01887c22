#!/bin/bash
# usage: fresh6.sh N... : statics B, S and this round's adaptive (dh) on members generated 2026-12-06 after the code, h200-ngram, x1, seed 1
for n in "$@"; do
  w=/tmp/lead37/wl5/bursty-$n.jsonl
  bash /tmp/l37f/cell.sh B baseline /tmp/l37f/snap-dh h200-ngram 1 $w 1
  bash /tmp/l37f/cell.sh S speculative /tmp/l37f/snap-dh h200-ngram 1 $w 1
  bash /tmp/l37f/cell.sh dh adaptive /tmp/l37f/snap-dh h200-ngram 1 $w 1
done
