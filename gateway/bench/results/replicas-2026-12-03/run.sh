#!/usr/bin/env bash
# Issue 16 part 2: 1, 2 and 4 gateway replicas behind haproxy (leastconn) vs one, on the emulated h200-ngram
# pair, mixed-medium at time scale 1, adaptive policy, exploration seeds 1-3; then SPECGATE_WORKERS=2 and a
# rolling restart of 2 replicas. Run from the repository root: bash gateway/bench/results/replicas-2026-12-03/run.sh
set -u
out=gateway/bench/results/replicas-2026-12-03
wl=${WORKLOAD:-mixed-medium}
for seed in 1 2 3; do
  for g in 1 2 4; do
    .venv/bin/specgate bench --workload "$wl" --policies adaptive --time-scale 1 --gateways "$g" \
      --gateway-env SPECGATE_RANDOM_SEED=$seed --out "$out/$wl-g$g-seed$seed.json" > /dev/null 2>&1
    echo "$wl g=$g seed=$seed rc=$?"
  done
  .venv/bin/specgate bench --workload "$wl" --policies adaptive --time-scale 1 --gateway-env SPECGATE_WORKERS=2 \
    --gateway-env SPECGATE_RANDOM_SEED=$seed --out "$out/$wl-workers2-seed$seed.json" > /dev/null 2>&1
  echo "$wl workers=2 seed=$seed rc=$?"
  .venv/bin/specgate bench --workload "$wl" --policies adaptive --time-scale 1 --gateways 2 --rolling-restart \
    --gateway-env SPECGATE_RANDOM_SEED=$seed --out "$out/$wl-g2-rolling-seed$seed.json" > /dev/null 2>&1
  echo "$wl g=2 rolling restart seed=$seed rc=$?"
done
