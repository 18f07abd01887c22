#!/bin/bash
# usage: pairq.sh PROFILE SCALE SEED WORKLOAD... : base code (main @25d7e71) baseline,speculative,adaptive, then this branch's adaptive
prof=$1; scale=$2; seed=$3; shift 3
mkdir -p /tmp/w37/runs
for w in "$@"; do
  name=$(basename $w .jsonl)
  out=/tmp/w37/runs/base--$prof--$name--x$scale--s$seed.json
  [ -f $out ] || PYTHONPATH=/tmp/w37/base /work/wt/w37/.venv/bin/specgate bench --workload $w --profile $prof \
     --policies baseline,speculative,adaptive --time-scale $scale --seed $seed --out $out > $out.log 2>&1
  echo "$(date +%T) done $out $(uptime | sed 's/.*average: //')"
  out2=/tmp/w37/runs/${NEWTAG:-new1}--$prof--$name--x$scale--s$seed.json
  [ -f $out2 ] || PYTHONPATH=${NEW:-/tmp/w37/new1} /work/wt/w37/.venv/bin/specgate bench --workload $w --profile $prof \
     --policies adaptive --time-scale $scale --seed $seed --out $out2 > $out2.log 2>&1
  echo "$(date +%T) done $out2 $(uptime | sed 's/.*average: //')"
done
