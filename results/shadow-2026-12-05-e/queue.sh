#!/bin/bash
# usage: queue.sh VERSION PROFILE SCALE VARIANTS WORKLOAD... (cells one after another)
ver=$1; prof=$2; scale=$3; variants=$4; shift 4
for w in "$@"; do /tmp/w37s/cell.sh $ver $prof $scale $w 1 "$variants"; done
