#!/bin/bash
# the load cap lifted (SPECGATE_REGIME_SPECULATION_MAX_LOAD=1000) on the overloaded public window and on mixed-high
bash /tmp/l37f/cell.sh nocap adaptive /tmp/l37f/snap-main7 h200-ngram 1 /tmp/l37f/pub/azure-code-burst.jsonl 1 SPECGATE_REGIME_SPECULATION_MAX_LOAD=1000
cd /tmp/l37f && [ -f ev/nocap--h200-ngram--mixed-high--x4-first100--s1.json ] || PYTHONPATH=/tmp/l37f/snap-main7 /work/main/.venv/bin/specgate bench --workload mixed-high --profile h200-ngram --policies adaptive --time-scale 4 --limit 100 --seed 1 --gateway-env SPECGATE_REGIME_SPECULATION_MAX_LOAD=1000 --out ev/nocap--h200-ngram--mixed-high--x4-first100--s1.json > ev/nocap-mh.log 2>&1
echo "$(date +%T) nocap mixed-high done" >> /tmp/l37f/ev/done.log
