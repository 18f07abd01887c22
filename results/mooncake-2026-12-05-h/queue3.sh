#!/bin/bash
cd /tmp/w38q
PY=/work/wt/w38b/.venv/bin/python
until grep -q "queue2 done" out/queue.log; do sleep 5; done
run() {
  local name=$1 code=$2; shift 2
  echo "$(date -u +%T) start $name ($code) load $(cut -d' ' -f1-3 /proc/loadavg)" >> out/queue.log
  uptime > out/$name.uptime
  PYTHONPATH=/tmp/w38q/$code timeout 600 $PY -m gateway bench "$@" --out out/$name.json > out/$name.stdout 2>&1
  echo "rc=$?" >> out/$name.uptime; uptime >> out/$name.uptime
  echo "$(date -u +%T) end $name" >> out/queue.log
}
run m3-4+4-ttftw ttftw --workload wl/m3.jsonl --time-scale 1 --fleet 4xbaseline,4xspeculative --policies adaptive --repeat 3 --seed 1 --gateway-env SPECGATE_TTFT_WEIGHT=1
run onegpu-ttftw ttftw --workload mixed-phases --profile h200-ngram --policies baseline,speculative,adaptive --seed 1 --gateway-env SPECGATE_TTFT_WEIGHT=1
echo "$(date -u +%T) queue3 done" >> out/queue.log
