#!/bin/bash
# Stop the vLLM servers this directory's scripts started (by their recorded pids, whole process group), and
# wait until their GPU memory is back. usage: stop_vllm.sh NAME...   (names as given to serve_vllm.sh)
for name in "$@"; do
  pid=$(cat "/tmp/gpu/$name.pid" 2>/dev/null) || continue
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || { rm -f "/tmp/gpu/$name.pid"; continue; }
  echo "stopping $name pid $pid"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
  for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -0 "$pid" 2>/dev/null && kill -KILL -- "-$pid" 2>/dev/null
  rm -f "/tmp/gpu/$name.pid"
done
# vLLM's engine core is a child process: wait for the GPU memory to come back (at most 60 s).
for _ in $(seq 1 60); do
  used=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -1)
  [ -z "$used" ] || [ "$used" -lt 2000 ] && break
  sleep 1
done
echo "GPU memory in use: ${used:-?} MiB"
