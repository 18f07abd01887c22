#!/bin/bash
# Mooncake prefix-cache targets at merged main (418c26e): adaptive, least_loaded, vllm-router cache_aware; 2 seeds
cd /tmp/l37f/mc
for cell in m3:2 m4:4; do
  w=${cell%:*}; n=${cell#*:}
  echo "$(date -u +%T) start $w $n load $(cut -d' ' -f1-3 /proc/loadavg)" >> mc.log
  PYTHONPATH=/tmp/l37f/snap-fin4 timeout 1200 /work/main/.venv/bin/python -m gateway bench --workload $w.jsonl --time-scale 1 \
    --fleet ${n}xbaseline,${n}xspeculative --policies adaptive,least_loaded --peers vllm-router:cache_aware \
    --repeat 2 --seed 1 --out $w-$n+$n.json > $w-$n+$n.stdout 2>&1
  echo "$(date -u +%T) end $w $n rc $? load $(cut -d' ' -f1-3 /proc/loadavg)" >> mc.log
done
