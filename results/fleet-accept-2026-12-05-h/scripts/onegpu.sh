#!/bin/bash
cd /tmp/w38i
mkdir -p one
for v in "$@"; do
  echo "$v start $(date -u +%T) $(uptime)" >> one/runs.uptime
  PYTHONPATH=/tmp/w38i/snap-$v /work/wt/w38c/.venv/bin/python -m gateway bench --workload mixed-phases --profile h200-ngram --policies baseline,speculative,adaptive --seed 1 --out one/$v.json > one/$v.log 2>&1
  echo "$v end $(date -u +%T) $(uptime)" >> one/runs.uptime
  python3 -c "import json;d=json.load(open('one/$v.json'));print('$v', {k: round(p['summary']['mean_e2e_s'],4) for k,p in d['policies'].items()}, d['policies']['adaptive']['summary']['routed'])"
done
echo ONEDONE
