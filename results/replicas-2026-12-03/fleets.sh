#!/usr/bin/env bash
# Issue 16 on the emulated fleets of the fleet issue: 1 + 1 GPUs (one baseline, one speculative server, a GPU
# each) at medium load and 2 + 2 at high load; 1, 2, 4 gateway replicas behind haproxy; seeds 1-3. Same
# snapshot and invocation as pair.sh.
set -u
export PYTHONPATH=${PYTHONPATH:-$PWD}
py=${PY:-python3}
out=${OUT:?set OUT to the results directory}
bench() { "$py" -m gateway bench --policies adaptive --time-scale 1 "$@" > /dev/null 2>&1; echo "$* rc=$?"; }
for seed in 1 2 3; do
  for g in 1 2 4; do
    bench --workload mixed-medium --fleet baseline,speculative --seed $seed --gateways $g \
      --out "$out/fleet1+1-mixed-medium-g$g-seed$seed.json"
    bench --workload mixed-high --fleet 2xbaseline,2xspeculative --seed $seed --gateways $g \
      --out "$out/fleet2+2-mixed-high-g$g-seed$seed.json"
  done
done
