#!/bin/bash
# usage: bench1.sh TAG CODE_DIR WINDOW SEED [extra args...]
TAG=$1; CODE=$2; W=$3; SEED=$4; shift 4
cd /tmp/w38k
echo "$(date -u +%H:%M:%S) $TAG $W s$SEED start $(cut -d' ' -f1-3 /proc/loadavg)" >> runs/uptime.log
if [ "$W" = bursty ]; then
  PYTHONPATH=$CODE /work/main/.venv/bin/python -m gateway bench --workload bursty --profile h200-ngram \
    --policies baseline,speculative,adaptive --out runs/$TAG--$W--s$SEED.json > runs/$TAG--$W--s$SEED.log 2>&1
else
PYTHONPATH=$CODE /work/main/.venv/bin/python -m gateway bench --workload win/$W.jsonl --time-scale 1 \
  --fleet 2xbaseline,2xspeculative --seed $SEED --policies adaptive "$@" --out runs/$TAG--$W--s$SEED.json > runs/$TAG--$W--s$SEED.log 2>&1
fi
echo "$(date -u +%H:%M:%S) $TAG $W s$SEED end rc=$? $(cut -d' ' -f1-3 /proc/loadavg)" >> runs/uptime.log
