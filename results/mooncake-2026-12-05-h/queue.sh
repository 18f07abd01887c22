#!/bin/bash
# one bench at a time; PYTHONPATH selects the code (git archive snapshots of main 54a0a4e and w38q e8d9772)
cd /tmp/w38q
PY=/work/wt/w38b/.venv/bin/python
run() {  # name code args...
  local name=$1 code=$2; shift 2
  echo "$(date -u +%T) start $name ($code) load $(cut -d' ' -f1-3 /proc/loadavg)" >> out/queue.log
  uptime > out/$name.uptime
  PYTHONPATH=/tmp/w38q/$code timeout 1500 $PY -m gateway bench "$@" --out out/$name.json > out/$name.stdout 2>&1
  echo "rc=$?" >> out/$name.uptime; uptime >> out/$name.uptime
  echo "$(date -u +%T) end $name" >> out/queue.log
}
run onegpu-main main --workload mixed-phases --profile h200-ngram --policies baseline,speculative,adaptive --seed 1
run onegpu-branch branch --workload mixed-phases --profile h200-ngram --policies baseline,speculative,adaptive --seed 1
for cell in m3:2 m4:4 m3:4 m4:2 m1:4 m2:2; do
  w=${cell%:*}; n=${cell#*:}; fleet="${n}xbaseline,${n}xspeculative"
  run $w-$n+$n-main main --workload wl/$w.jsonl --time-scale 1 --fleet $fleet --policies adaptive --repeat 3 --seed 1
  run $w-$n+$n-branch branch --workload wl/$w.jsonl --time-scale 1 --fleet $fleet --policies adaptive,least_loaded --peers vllm-router:cache_aware,sglang-router:cache_aware --repeat 3 --seed 1
  if [ -e /tmp/w38q/STOP ]; then break; fi
done
echo "$(date -u +%T) queue done" >> out/queue.log
