#!/bin/bash
# slot.sh CMD: as /tmp/bslot.sh (one of the two bench slots while CMD runs), polling every $POLL s (0.1; the
# last two runs 0.05, then as slot2.sh, folded in here)
# The full test suite must hold both: bslot.sh --both CMD...
if [ "$1" = "--both" ]; then shift; exec flock /tmp/bench.slot0 flock /tmp/bench.slot1 "$@"; fi
while true; do
  for s in 0 1; do
    exec 9>/tmp/bench.slot$s
    if flock -n 9; then "$@"; rc=$?; flock -u 9; exit $rc; fi
    exec 9>&-
  done
  sleep "${POLL:-0.1}"
done
