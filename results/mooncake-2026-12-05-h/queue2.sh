#!/bin/bash
cd /tmp/w38q
PY=/work/wt/w38b/.venv/bin/python
until grep -q "queue done" out/queue.log; do sleep 10; done
run() {
  local name=$1 code=$2; shift 2
  echo "$(date -u +%T) start $name ($code) load $(cut -d' ' -f1-3 /proc/loadavg)" >> out/queue.log
  uptime > out/$name.uptime
  PYTHONPATH=/tmp/w38q/$code timeout 1500 $PY -m gateway bench "$@" --out out/$name.json > out/$name.stdout 2>&1
  echo "rc=$?" >> out/$name.uptime; uptime >> out/$name.uptime
  echo "$(date -u +%T) end $name" >> out/queue.log
}
run m3-2+2-ttftw ttftw --workload wl/m3.jsonl --time-scale 1 --fleet 2xbaseline,2xspeculative --policies adaptive --repeat 3 --seed 1 --gateway-env SPECGATE_TTFT_WEIGHT=1
run m4-4+4-ttftw ttftw --workload wl/m4.jsonl --time-scale 1 --fleet 4xbaseline,4xspeculative --policies adaptive --repeat 3 --seed 1 --gateway-env SPECGATE_TTFT_WEIGHT=1
[ -e /tmp/w38q/STOP2 ] && exit 0
run m1-4+4-main main --workload wl/m1.jsonl --time-scale 1 --fleet 4xbaseline,4xspeculative --policies adaptive --repeat 3 --seed 1
run m1-4+4-branch branch --workload wl/m1.jsonl --time-scale 1 --fleet 4xbaseline,4xspeculative --policies adaptive,least_loaded --peers vllm-router:cache_aware,sglang-router:cache_aware --repeat 3 --seed 1
echo "$(date -u +%T) queue2 done" >> out/queue.log
