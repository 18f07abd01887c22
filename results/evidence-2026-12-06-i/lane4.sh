#!/bin/bash
src=$1
for wl in "mixed-phases 100" "demo-mixed 100" "bursty 150" "structured-heavy 150" "creative-heavy 100" "mixed-medium 100" "mixed-low 100" "mixed-high 100"; do
  set -- $wl
  bash /tmp/l37f/cell4.sh B baseline $src $1 $2 1
  bash /tmp/l37f/cell4.sh S speculative $src $1 $2 1
  bash /tmp/l37f/cell4.sh dh adaptive $src $1 $2 1
done
