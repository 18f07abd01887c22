#!/bin/bash
# Start one vLLM server in its own process session (it outlives the calling shell); pid in /tmp/gpu/NAME.pid.
# usage: serve_vllm.sh NAME PORT MEMFRAC [extra vllm args...]   env: MAX_MODEL_LEN (default 8192)
# Same as ../shared/gpu/serve.sh (the recipe that worked on 2026-12-02) except --max-model-len, which is 8192
# (the model's max_position_embeddings) so the workloads' long prompts fit.
name=$1; port=$2; mem=$3; shift 3
mkdir -p /tmp/logs /tmp/gpu
export PYTHONPATH=/tmp/site VLLM_NO_USAGE_STATS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 DO_NOT_TRACK=1
setsid nohup python3 -m vllm.entrypoints.cli.main serve /tmp/models/target --served-model-name target \
  --load-format dummy --port "$port" --host 127.0.0.1 --gpu-memory-utilization "$mem" \
  --max-model-len "${MAX_MODEL_LEN:-8192}" --max-num-seqs 256 "$@" > "/tmp/logs/$name.log" 2>&1 < /dev/null &
echo $! > "/tmp/gpu/$name.pid"
echo "started $name pid $! port $port: $*" | tee "/tmp/gpu/$name.cmd"
