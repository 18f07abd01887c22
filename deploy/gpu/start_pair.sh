#!/bin/bash
# Start (or keep) the baseline and the speculative vLLM servers on the one GPU, without waiting.
# usage: start_pair.sh ngram|draft
# A server already running in the wanted configuration is kept; a speculative server of the other
# configuration is stopped first (by its recorded pid) so the two never hold GPU memory together.
mode=${1:-ngram}; here=$(cd "$(dirname "$0")" && pwd)
case $mode in
  ngram) spec='{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2, "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 3.3}';;
  draft) spec='{"method": "draft_model", "model": "/tmp/models/draft", "num_speculative_tokens": 4, "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 3.35}';;
  *) echo "unknown mode $mode"; exit 2;;
esac
alive() { local pid; pid=$(cat "/tmp/gpu/$1.pid" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
mkdir -p /tmp/gpu
if alive baseline; then echo "baseline already running (pid $(cat /tmp/gpu/baseline.pid))"
else bash "$here/serve_vllm.sh" baseline 8001 0.45; fi
if alive speculative && [ "$(cat /tmp/gpu/speculative.mode 2>/dev/null)" = "$mode" ]; then
  echo "speculative ($mode) already running (pid $(cat /tmp/gpu/speculative.pid))"
else
  if alive speculative; then
    pid=$(cat /tmp/gpu/speculative.pid); echo "stopping speculative ($(cat /tmp/gpu/speculative.mode)) pid $pid"
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
    for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
    sleep 3
  fi
  # Start it only once the baseline is up: two servers profiling memory at once each count the other's
  # allocations as their own and the second one is left with no KV cache (seen 2026-12-02: 0.7 GiB).
  bash "$here/wait_vllm.sh" 8001 baseline 300 || exit 1
  bash "$here/serve_vllm.sh" speculative 8002 0.45 --speculative-config "$spec"
  echo "$mode" > /tmp/gpu/speculative.mode
fi
