#!/bin/bash
# usage: wait_vllm.sh PORT NAME TIMEOUT_S  -> 0 once /health answers, 1 if the process died or time ran out
port=$1; name=$2; limit=$3; pid=$(cat "/tmp/gpu/$name.pid" 2>/dev/null)
for i in $(seq 1 "$limit"); do
  if curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1; then echo "$name healthy (waited ${i}s here)"; exit 0; fi
  if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then echo "$name died"; tail -40 "/tmp/logs/$name.log"; exit 1; fi
  sleep 1
done
echo "$name not healthy after $limit s"; tail -30 "/tmp/logs/$name.log"; exit 1
