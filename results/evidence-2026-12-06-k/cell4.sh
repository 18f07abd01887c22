#!/bin/bash
# usage: cell4.sh TAG POLICY SRC WORKLOAD LIMIT SEED [ENV...]  (h200-ngram, time scale 4, first LIMIT requests)
cd /tmp/l37f || exit 1
tag=$1; pol=$2; src=$3; w=$4; lim=$5; seed=$6; shift 6; envs=""
for e in "$@"; do envs="$envs --gateway-env $e"; done
key=h200-ngram--$w--x4-first$lim--s$seed
out=/tmp/l37f/ev/$tag--$key.json
[ -f $out ] || PYTHONPATH=$src /work/main/.venv/bin/specgate bench --workload $w --profile h200-ngram --policies $pol \
    --time-scale 4 --limit $lim --seed $seed $envs --out $out > $out.log 2>&1
echo "$(date +%T) $tag $key load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/l37f/ev/done.log
