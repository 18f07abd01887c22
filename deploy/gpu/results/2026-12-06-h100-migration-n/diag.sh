#!/bin/bash
# Diagnostic: 501 with migration on, the gateway's whole log, vLLM's logs and both servers' queues sampled every 0.5 s.
( while true; do for p in 8001 8002; do echo "$(date +%s.%N) $p $(curl -s -m 1 localhost:$p/metrics | grep -E '^vllm:(num_requests_running|num_requests_waiting|num_preemptions_total|prompt_tokens_total|generation_tokens_total|spec_decode_num_drafts_total|spec_decode_num_accepted_tokens_total)' | tr '\n' ' ')"; done; sleep 0.5; done ) > $OUT/metrics-samples.txt 2>&1 &
S=$!
SPECGATE_MIGRATION=true SPECGATE_LOG_LEVEL=DEBUG OUT=$OUT/a RUN_DIR=/tmp/run-a WARMUP=24 BUDGET_S=${BUDGET_S:-560} POLICIES=${POLICIES:-adaptive@1} \
  bash deploy/gpu/run_one_gpu.sh pair --low-workload gpu-traces/bursty-501.jsonl --low-rate 0 --low-duration 120 --high-n 0 2>&1 | tail -8
kill $S
cp /tmp/specgate-gw-*.log /tmp/logs/*.log $OUT/ 2>/dev/null; cp -r /tmp/run-a/pair $OUT/run-a-pair; rm -f $OUT/run-a-pair/*metrics.txt
gzip $OUT/*.log $OUT/metrics-samples.txt; ls -la $OUT
