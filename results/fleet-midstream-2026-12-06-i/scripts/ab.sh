#!/bin/bash
# usage: ab.sh "v1 v2" "seeds" cell...   versions interleaved per seed, order alternating by seed
# version "mid" = snap-br with SPECGATE_MIDSTREAM_MOVES=true; "main" = snap-main; "br" = snap-br, setting off
cd /tmp/w38c-i
VERS=$1; SEEDS=$2; shift 2
for cell in "$@"; do
  W=${cell%%:*}; F=${cell#*:}
  case $F in 1+1) FL=baseline,speculative;; 2+2) FL=2xbaseline,2xspeculative;; 4+4) FL=4xbaseline,4xspeculative;; esac
  tag=$W--$F
  for seed in $SEEDS; do
    if [ $((seed % 2)) -eq 1 ]; then order="$VERS"; else order=$(echo $VERS | tr ' ' '\n' | tac | tr '\n' ' '); fi
    for v in $order; do
      case $v in mid) SNAP=snap-br; MOV=true;; br) SNAP=snap-br; MOV=false;; *) SNAP=snap-$v; MOV=false;; esac
      echo "$v $tag $seed start $(date -u +%T) $(uptime)" >> ab/runs.uptime
      SPECGATE_MIDSTREAM_MOVES=$MOV PYTHONPATH=/tmp/w38c-i/$SNAP /work/wt/w38c/.venv/bin/python -m gateway bench --workload $W.jsonl --time-scale 1 --fleet $FL --policies adaptive --seed $seed --out ab/$v--$tag--s$seed.json > ab/$v--$tag--s$seed.log 2>&1
      python3 -c "import json;d=json.load(open('ab/$v--$tag--s$seed.json'));p=d['policies']['adaptive'];print('$v $tag s$seed', round(p['summary']['mean_e2e_s'],4), p['summary']['routed'], p['prediction']['median_error_ratio'])"
    done
  done
  echo "end $tag $(date -u +%T) $(uptime)" >> ab/runs.uptime
done
echo ABDONE
