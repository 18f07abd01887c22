#!/bin/bash
# usage: cell.sh TAG POLICY SRC PROFILE SCALE WORKLOAD SEED [ENV...]
cd /tmp/l37f || exit 1
tag=$1; pol=$2; src=$3; prof=$4; scale=$5; w=$6; seed=${7:-1}; shift 7; envs=""
for e in "$@"; do envs="$envs --gateway-env $e"; done
name=$(basename $w .jsonl); key=$prof--$name--x$scale--s$seed
out=/tmp/l37f/ev/$tag--$key.json
[ -f $out ] || PYTHONPATH=$src /work/main/.venv/bin/specgate bench --workload $w --profile $prof --policies $pol \
    --time-scale $scale --seed $seed $envs --out $out > $out.log 2>&1
echo "$(date +%T) $tag $key load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/l37f/ev/done.log
