#!/bin/bash
# Sourced by run_one_gpu.sh and run_real.sh after PYTHONPATH is set: the gateway must import before anything
# starts vLLM (a pair's start costs 2-4 minutes of device time; three rounds lost a call to a missing orjson,
# which the GPU image lacks). Exits 3 naming the module and the fix.
#   . deploy/gpu/preflight.sh
if ! missing=$(${PY:-python3} -c "import gateway.server, gateway.bench.replay.client" 2>&1); then
  echo "preflight: the gateway does not import here: $(echo "$missing" | tail -1)"
  echo "preflight: on the machine that reaches the package index run 'bash deploy/gpu/fetch_wheels.sh'"
  echo "preflight: and carry .gpu-wheels (installed into /tmp/extra by this script)"
  exit 3
fi
