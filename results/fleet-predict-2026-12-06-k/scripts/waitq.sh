#!/bin/bash
# wait until process $1 (my previous queue) ends, then run the queue file $2
while kill -0 "$1" 2>/dev/null; do sleep 5; done
./queue.sh "$2"
