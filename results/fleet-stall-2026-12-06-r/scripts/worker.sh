#!/bin/bash
# worker.sh N: take the oldest job file from queue/, run it, log start/end with load; poll 3 s when idle
cd /tmp/w38r
while true; do
  j=$(ls queue/ 2>/dev/null | sort | head -1)
  if [ -z "$j" ]; then [ -e stop ] && exit 0; sleep 3; continue; fi
  mv queue/$j running/$j 2>/dev/null || continue
  echo "$(date -u +%T) start $j w$1 load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  bash running/$j; rc=$?
  echo "$(date -u +%T) end $j w$1 rc $rc load $(cut -d' ' -f1-3 /proc/loadavg)" >> runs.log
  mv running/$j done/$j
done
