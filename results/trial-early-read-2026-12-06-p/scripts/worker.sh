#!/bin/bash
# worker.sh QUEUE: pop lines from QUEUE (under a lock) and run them, until it is empty
q=$1
while true; do
  line=$(flock $q.lock bash -c "head -1 $q; sed -i 1d $q")
  [ -z "$line" ] && exit 0
  bash -c "$line"
done
