#!/bin/bash
# usage: cell4.sh PROFILE SCALE WORKLOAD [SEED] : baseline, speculative (main code), adaptive main, adaptive v2, all at once
prof=$1; scale=$2; w=$3; seed=${4:-1}
name=$(basename $w .jsonl); key=$prof--$name--x$scale--s$seed
run() { # tag policy src
  out=/tmp/w37c/ev2/$1--$key.json
  [ -f $out ] || PYTHONPATH=$3 /work/wt/w37/.venv/bin/specgate bench --workload $w --profile $prof --policies $2 \
      --time-scale $scale --seed $seed --out $out > $out.log 2>&1
}
mkdir -p /tmp/w37c/ev2
run B baseline /tmp/w37c/main & run S speculative /tmp/w37c/main & run main adaptive /tmp/w37c/main & run new2 adaptive /tmp/w37c/final2 &
wait
echo "$(date +%T) $key load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/w37c/ev2/done.log
