#!/bin/bash
# One vLLM server alone on the GPU at --gpu-memory-utilization 0.90 (what a one-GPU user runs instead of a pair,
# and what each server of a 1 + 1 two-GPU fleet sees), on port 8001, after stopping every other server.
# usage: start_single.sh baseline|ngram|dynk [memfrac]
#   baseline: plain decoding
#   ngram:    n-gram prompt lookup, γ = 4 at every batch size (the pair's speculative server, alone)
#   dynk:     the same with vLLM's dynamic speculative decoding (num_speculative_tokens_per_batch_size):
#             γ = 4 up to 4 running requests, 2 up to 16, none above (DYNK_SCHEDULE overrides the schedule)
# Synthetic acceptance 3.3 as in start_pair.sh (dummy weights: acceptance is set, not measured).
layout=${1:?baseline|ngram|dynk}; mem=${2:-0.90}; here=$(cd "$(dirname "$0")" && pwd)
schedule=${DYNK_SCHEDULE:-[[1, 4, 4], [5, 16, 2], [17, 256, 0]]}
ngram='"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2, "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 3.3'
case $layout in
  baseline) extra=();;
  ngram) extra=(--speculative-config "{$ngram}");;
  dynk) extra=(--speculative-config "{$ngram, \"num_speculative_tokens_per_batch_size\": $schedule}");;
  *) echo "unknown layout $layout"; exit 2;;
esac
bash "$here/stop_vllm.sh" baseline speculative single-baseline single-ngram single-dynk
bash "$here/serve_vllm.sh" "single-$layout" 8001 "$mem" "${extra[@]}"
echo "$layout" > /tmp/gpu/single.layout
