#!/bin/bash
# Run where the package index is reachable, from the repo root: the gateway's dependencies that the offline GPU
# image (Python 3.12, x86-64) and the vLLM bundle of ../shared/gpu/ lack, as wheels in .gpu-wheels/ (git-ignored).
# Carry .gpu-wheels on each device call; run_one_gpu.sh and run_real.sh install them into /tmp/extra.
#   bash deploy/gpu/fetch_wheels.sh [more packages...]
set -euo pipefail
mkdir -p .gpu-wheels
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --platform any -d .gpu-wheels orjson "$@"
ls .gpu-wheels
