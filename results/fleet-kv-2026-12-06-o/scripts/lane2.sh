#!/bin/bash
# lane2.sh: runs "SNAP TAG WINDOW SEED [ENV]" lines from stdin one after another
while read snap tag w s env; do
  if [ -n "$env" ]; then ./b1.sh $snap $tag $w $s --gateway-env $env; else ./b1.sh $snap $tag $w $s; fi
done
