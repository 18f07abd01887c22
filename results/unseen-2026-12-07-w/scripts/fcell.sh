#!/bin/bash
# usage: fcell.sh TAG POLICY SRC FLEET WINDOW SEED [PEERS]
tag=$1; pol=$2; src=$3; fleet=$4; w=$5; seed=$6; peers=$7
out=/tmp/f39/ev/$tag--$w--$(echo $fleet | tr ',' '_')--s$seed.json
extra=""; [ -n "$peers" ] && extra="--peers $peers"
[ -f $out ] || PYTHONPATH=$src PATH=/work/main/.venv/bin:$PATH /work/main/.venv/bin/specgate bench --workload /tmp/f39/w/$w.jsonl --fleet $fleet \
   --policies=$pol --time-scale 1 --seed $seed $extra --out $out > $out.log 2>&1
echo "$(date +%T) $tag $w s$seed rc $? load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/f39/ev/done.log
