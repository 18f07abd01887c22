#!/bin/bash
# lane.sh SEED WINDOW: runs "SNAP TAG [ENV]" lines from stdin one after another
s=$1; w=$2
while read snap tag env; do
  if [ -n "$env" ]; then ./b1.sh $snap $tag $w $s --gateway-env $env; else ./b1.sh $snap $tag $w $s; fi
done
