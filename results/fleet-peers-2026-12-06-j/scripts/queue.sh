#!/bin/bash
# runs lines of queue.txt one at a time: TAG CODE WINDOW SEED [args]; marks done lines in queue.done
cd /tmp/w38j
while true; do
  [ -f STOP ] && exit 0
  line=$(grep -vxF -f <(cat queue.done 2>/dev/null; echo '#none#') queue.txt | head -1)
  if [ -z "$line" ]; then sleep 10; continue; fi
  echo "$line" >> queue.done
  ./bench1.sh $line
done
