#!/bin/bash
# One scripted pass on the GPU machine: (start and) wait for the vLLM pair, replay the workloads through
# specgate with each policy, write everything to $OUT (flat, <= 8 files).
#   bash deploy/gpu/run_real.sh ngram|draft [--no-vllm] [extra real_bench.py args...]
# Needs: vLLM unpacked in /tmp/site and the models in /tmp/models (../shared/gpu/stage.sh), and the gateway's
# missing wheels (orjson, ...) carried as .gpu-wheels (installed into /tmp/extra). --no-vllm runs the same
# pass against `specgate emulate` on the same ports (a local rehearsal).
set -u
mode=${1:-ngram}; shift || true
novllm=0; if [ "${1:-}" = "--no-vllm" ]; then novllm=1; shift; fi
here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../.." && pwd); cd "$repo"
OUT=${OUT:-/tmp/specgate-out}; mkdir -p "$OUT"
BUDGET_S=${BUDGET_S:-560}          # the whole script; the device's limit per call is 600 s
start=$(date +%s)
case $mode in ngram) acc=3.3;; draft) acc=3.35;; *) echo "mode ngram|draft"; exit 2;; esac
if [ -d .gpu-wheels ] && [ ! -f /tmp/extra/.done ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/extra .gpu-wheels/*.whl && touch /tmp/extra/.done
fi
export PYTHONPATH=/tmp/site:/tmp/extra:$repo PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
. "$here/preflight.sh"   # the gateway imports, before vLLM starts
{ date -u; nvidia-smi 2>&1 || echo "no nvidia-smi"; } > "$OUT/nvidia-smi.txt"
emu_pid=
if [ $novllm = 1 ]; then
  profile=h200-ngram; [ "$mode" = draft ] && profile=h200-draft
  $PY -m gateway emulate --baseline-port 8001 --speculative-port 8002 --model target --profile $profile \
     --synthetic-acceptance-length $acc --load-format dummy > /tmp/specgate-emulator.log 2>&1 &
  emu_pid=$!
  for _ in $(seq 1 30); do curl -sf http://127.0.0.1:8002/health >/dev/null && break; sleep 0.5; done
  vllm_version="emulator ($profile)"
else
  bash "$here/start_pair.sh" "$mode"
  bash "$here/wait_vllm.sh" 8001 baseline 300 & w1=$!
  bash "$here/wait_vllm.sh" 8002 speculative 300 & w2=$!
  wait $w1 || { echo "baseline failed"; }
  wait $w2 || { echo "speculative failed"; }
  vllm_version=$(PYTHONPATH=/tmp/site python3 -c 'import vllm; print(vllm.__version__)' 2>/dev/null)
fi
left=$(( BUDGET_S - ($(date +%s) - start) - 25 ))
echo "servers up after $(( $(date +%s) - start )) s; bench budget ${left} s"
gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)
$PY "$here/real_bench.py" --out "$OUT" --label "$( [ $novllm = 1 ] && echo emulated || echo real)-h200-$mode" \
  --configured-acceptance $acc --budget-s "$left" --meta "vllm_version=${vllm_version}" --meta "gpu=${gpu:-none}" \
  --meta "mode=$mode" --meta "speculative_config=$(cat /tmp/gpu/speculative.mode 2>/dev/null)" \
  --meta "serve_cmd=$(grep -h 'started' /tmp/gpu/*.cmd 2>/dev/null | tr '\n' ' ')" "$@"
rc=$?
{ date -u; nvidia-smi 2>&1; } >> "$OUT/nvidia-smi.txt"
{ echo; for n in baseline speculative; do echo "==== vLLM $n log (tail) ===="; tail -25 /tmp/logs/$n.log 2>/dev/null; done
  [ -n "$emu_pid" ] && { echo "==== emulator log (tail) ===="; tail -5 /tmp/specgate-emulator.log; }; } >> "$OUT/logs.txt"
[ -n "$emu_pid" ] && kill "$emu_pid"
echo "run_real.sh done rc=$rc after $(( $(date +%s) - start )) s"; ls -la "$OUT"
exit $rc
