#!/bin/bash
# usage: adq.sh PROFILE SCALE SEED WORKLOAD... : this branch's adaptive only (statics from the seed-1 base run)
prof=$1; scale=$2; seed=$3; shift 3
for w in "$@"; do
  name=$(basename $w .jsonl)
  out2=/tmp/w37/runs/${NEWTAG:-new4}--$prof--$name--x$scale--s$seed.json
  [ -f $out2 ] || PYTHONPATH=${NEW:-/tmp/w37/new4} /work/wt/w37/.venv/bin/specgate bench --workload $w --profile $prof \
     --policies adaptive --time-scale $scale --seed $seed --out $out2 > $out2.log 2>&1
  echo "$(date +%T) done $out2 $(uptime | sed 's/.*average: //')"
done
