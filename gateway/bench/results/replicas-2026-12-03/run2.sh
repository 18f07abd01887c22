#!/usr/bin/env bash
# Issue 16, rolling restart with learned state carried over: 2 replicas, each restarted in turn under traffic,
# the restarted one warm-starting from the running one (SPECGATE_PEERS) or from its own state file.
# Run from the repository root: bash gateway/bench/results/replicas-2026-12-03/run2.sh
set -u
out=gateway/bench/results/replicas-2026-12-03
wl=${WORKLOAD:-mixed-medium}
for seed in 1 2 3; do
  for warm in peers file; do
    .venv/bin/specgate bench --workload "$wl" --policies adaptive --time-scale 1 --gateways 2 --rolling-restart \
      --warm $warm --gateway-env SPECGATE_RANDOM_SEED=$seed --out "$out/$wl-g2-rolling-$warm-seed$seed.json" \
      > /dev/null 2>&1
    echo "$wl g=2 rolling restart warm=$warm seed=$seed rc=$?"
  done
done
