#!/bin/bash
# usage: ab.sh "v1 v2" "seeds" cell...   versions interleaved per seed, order alternating by seed
cd /tmp/w38h
R=/work/wt/w38c/runs/g
S=/work/wt/w38c/.venv/bin/specgate
VERS=$1; SEEDS=$2; shift 2
for cell in "$@"; do
  W=${cell%%:*}; F=${cell#*:}
  case $F in 1+1) FL=baseline,speculative;; 2+2) FL=2xbaseline,2xspeculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  tag=$W--$F
  for seed in $SEEDS; do
    if [ $((seed % 2)) -eq 1 ]; then order="$VERS"; else order=$(echo $VERS | tr ' ' '\n' | tac | tr '\n' ' '); fi
    for v in $order; do
      echo "$v $seed start $(date -u +%T) $(uptime)" >> $R/ab/$tag.uptime
      PYTHONPATH=$R/snap-$v $S bench --workload /work/wt/w38c/runs/$W.jsonl --time-scale 1 --fleet $FL --policies adaptive --seed $seed --out $R/ab/$v--$tag--s$seed.json > $R/ab/$v--$tag--s$seed.log 2>&1
      python3 -c "import json;d=json.load(open('$R/ab/$v--$tag--s$seed.json'));print('$v $tag s$seed', d['policies']['adaptive']['summary']['mean_e2e_s'])"
    done
  done
  echo "end $(date -u +%T) $(uptime)" >> $R/ab/$tag.uptime
done
echo ALLDONE
