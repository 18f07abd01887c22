#!/bin/bash
# usage: fresh.sh SRC N... : statics B, S and adaptive (tag h5) on fresh family members, h200-ngram, x1, seed 1
src=$1; shift
for n in "$@"; do
  w=/tmp/lead37/wl4/bursty-$n.jsonl
  bash /tmp/l37f/cell.sh B baseline $src h200-ngram 1 $w 1
  bash /tmp/l37f/cell.sh S speculative $src h200-ngram 1 $w 1
  bash /tmp/l37f/cell.sh h5 adaptive $src h200-ngram 1 $w 1
done
