#!/bin/bash
# fslot.sh CMD...: as /tmp/bslot.sh (hold one of the two bench slots while CMD runs), polling every 0.1 s
while true; do
  for s in 0 1; do
    exec 9>/tmp/bench.slot$s
    if flock -n 9; then "$@"; rc=$?; flock -u 9; exit $rc; fi
    exec 9>&-
  done
  sleep 0.1
done
