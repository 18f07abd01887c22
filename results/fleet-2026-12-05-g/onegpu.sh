#!/bin/bash
# one GPU pair, bursty, h200-ngram (default profile): main then the branch, statics and adaptive in one bench each
R=/work/wt/w38c/runs/g
S=/work/wt/w38c/.venv/bin/specgate
cd /tmp/w38h; mkdir -p $R/onegpu
for v in "$@"; do
  echo "$v start $(date -u +%T) $(uptime)" >> $R/onegpu/bursty.uptime
  PYTHONPATH=$R/snap-$v $S bench --workload bursty --policies baseline,speculative,adaptive --time-scale 1 --seed 1 --out $R/onegpu/$v--bursty--1gpu.json > $R/onegpu/$v--bursty--1gpu.log 2>&1
  python3 -c "
import json;d=json.load(open('$R/onegpu/$v--bursty--1gpu.json'));m={k:x['summary']['mean_e2e_s'] for k,x in d['policies'].items()}
print('$v', m, 'adaptive / better static', round(m['adaptive']/min(m['baseline'],m['speculative']),4))"
done
echo end $(date -u +%T) $(uptime) >> $R/onegpu/bursty.uptime
echo ONEDONE
