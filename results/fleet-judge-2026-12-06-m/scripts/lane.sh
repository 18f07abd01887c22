#!/bin/bash
# lane.sh FILE: run each line in turn
while read -r line; do [ -n "$line" ] && bash -c "$line"; done < "$1"
echo "$(date -u +%T) lane $1 done" >> runs.log
