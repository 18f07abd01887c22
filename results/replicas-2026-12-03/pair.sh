#!/usr/bin/env bash
# Issue 16: 1, 2 and 4 gateway replicas behind haproxy (leastconn), and SPECGATE_WORKERS=2, on the emulated
# h200-ngram pair, adaptive policy, time scale 1, exploration seeds 1-3, medium and high load; then rolling
# restarts of 2 replicas under traffic (restarted replica from its priors, from the running one, from its state file).
# Measured on main's gateway at commit $MAIN (a read-only `git archive` snapshot, so the routing is this round's):
#   git archive $MAIN | tar -x -C /tmp/mainsnap && cd /tmp/mainsnap && OUT=<repo>/results/replicas-2026-12-03 bash <repo>/results/replicas-2026-12-03/pair.sh
set -u
export PYTHONPATH=${PYTHONPATH:-$PWD}
py=${PY:-python3}
out=${OUT:?set OUT to the results directory}
bench() { "$py" -m gateway bench --policies adaptive --time-scale 1 "$@" > /dev/null 2>&1; echo "$* rc=$?"; }
for wl in mixed-medium mixed-high; do
  for seed in 1 2 3; do
    for g in 1 2 4; do
      bench --workload $wl --seed $seed --gateways $g --out "$out/$wl-g$g-seed$seed.json"
    done
    bench --workload $wl --seed $seed --gateway-env SPECGATE_WORKERS=2 --out "$out/$wl-workers2-seed$seed.json"
  done
done
for seed in 1 2 3; do
  for warm in none peers file; do
    bench --workload mixed-medium --seed $seed --gateways 2 --rolling-restart --warm $warm \
      --out "$out/mixed-medium-g2-rolling-$warm-seed$seed.json"
  done
done
