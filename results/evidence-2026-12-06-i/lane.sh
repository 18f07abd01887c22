#!/bin/bash
# usage: lane.sh TAG SRC KEYFILE  -- KEYFILE lines: PROFILE WORKLOADNAME SCALE SEED
tag=$1; src=$2; keys=$3
wl() { for d in /tmp/lead37/wl /tmp/lead37/wl2 /tmp/lead37/wl3 /tmp/lead37/wl4 /work/main/gateway/workloads/builtin; do [ -f $d/$1.jsonl ] && { echo $d/$1.jsonl; return; }; done; }
while read prof name scale seed; do
  bash /tmp/l37f/cell.sh $tag adaptive $src $prof $scale $(wl $name) $seed
done < $keys
