#!/bin/bash
# The scripted one-GPU phases, one device call per stage, everything packed into $OUT/<stage>.tgz.
#   bash deploy/gpu/run_one_gpu.sh singles [--no-vllm]   # (a) baseline, (b) dynamic-K n-gram, (b') static n-gram,
#                                                        # each alone at --gpu-memory-utilization 0.90, no gateway
#   bash deploy/gpu/run_one_gpu.sh pair [--no-vllm]      # (c) adaptive, 2 seeds, (d) static policies, on the pair at
#                                                        # 0.45 + 0.45 behind specgate
# Phases (real_bench.py, as run_real.sh): 24 warm-up requests (discarded), low = mixed-low Poisson 1.5/s for 36 s,
# high = 240 mixed-high requests at c = 48 closed loop; greedy and sampled requests as the workloads have them.
# Env: BUDGET_S (default 570: the device's limit per call is 600 s), LAYOUTS (singles, default "baseline dynk
# ngram"; a layout that cannot finish in what is left is skipped and recorded), POLICIES (pair, default
# "adaptive@1,adaptive@2,baseline,speculative"), PRESTART_PAIR=1 (singles: start the pair's baseline at the end),
# FRESH_PAIR=1 (pair: stop a pair left running by an earlier call, so this one starts cold), WARM_SAMPLING=1 (pair:
# deploy/warm_vllm.py's sampled bursts on both servers before the bench, as launch_pair.py does).
# Arguments after the stage go to real_bench.py; a trace with its own arrivals instead of the two phases:
#   bash deploy/gpu/run_one_gpu.sh pair --low-workload FILE.jsonl --low-rate 0 --low-duration 120 --high-n 0
# --no-vllm replays the same stage against `specgate emulate` (h200-ngram profiles, dummy weights) on this machine;
# EMU_TS there slows the emulated GPU (its --time-scale: 1.32 is an H100's speed on this stage, 2026-12-06).
set -u
stage=${1:?singles|pair}; shift
novllm=0; if [ "${1:-}" = "--no-vllm" ]; then novllm=1; shift; fi
here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../.." && pwd); cd "$repo"
OUT=${OUT:-/tmp/specgate-out}; mkdir -p "$OUT"; RUN=${RUN_DIR:-/tmp/run-$stage}; mkdir -p "$RUN"
BUDGET_S=${BUDGET_S:-570}; start=$(date +%s)
BPORT=${BPORT:-8001}; SPORT=${SPORT:-8002}; GWPORT=${GWPORT:-8000}   # --no-vllm: other ports on a shared machine
left() { echo $(( BUDGET_S - ($(date +%s) - start) )); }
if [ -d .gpu-wheels ] && [ ! -f /tmp/extra/.done ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/extra .gpu-wheels/*.whl && touch /tmp/extra/.done
fi
export PYTHONPATH=/tmp/site:/tmp/extra:$repo PYTHONUNBUFFERED=1
PY=${PYTHON:-python3}
. "$here/preflight.sh"   # the gateway imports, before vLLM starts
tok=/tmp/models/target/tokenizer.json; [ -f $tok ] || tok=${TOKENIZER:-../shared/gpu/models/target/tokenizer.json}
gpu=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null | head -1)
card=$(echo "$gpu" | grep -oiE 'h100|h200|a100|l40s' | head -1 | tr 'A-Z' 'a-z'); card=${card:-gpu}   # names the runs
vllm_version=$(PYTHONPATH=/tmp/site python3 -c 'import vllm; print(vllm.__version__)' 2>/dev/null)
pack() { tar czf "$OUT/$stage.tgz" -C "$RUN" . 2>/dev/null; }
keylines() {  # what the server chose at start-up: model runner, async scheduling, CUDA graphs, KV cache
  grep -aE "Model Runner|model runner|Asynchronous scheduling|async|cudagraph_mode|CUDA graph|KV cache|Maximum concurrency|Dynamic speculative|speculative|torch.compile|init engine|Overriding|Available KV" \
    "/tmp/logs/$1.log" 2>/dev/null | cut -c1-400 | head -60
}
emu_pid=
emulate() {  # $1 profile: an emulated pair on 8001/8002 (a single layout uses one of its two servers)
  [ -n "$emu_pid" ] && kill "$emu_pid" 2>/dev/null && wait "$emu_pid" 2>/dev/null
  $PY -m gateway emulate --baseline-port $BPORT --speculative-port $SPORT --model target --profile "$1" \
     --synthetic-acceptance-length 3.3 --load-format dummy --time-scale "${EMU_TS:-1}" > "$RUN/emulator-$1.log" 2>&1 &
  emu_pid=$!
  for _ in $(seq 1 40); do curl -sf http://127.0.0.1:$SPORT/health >/dev/null && break; sleep 0.5; done
}
bench() {  # label out-subdir extra-args...
  local label=$1 sub=$2; shift 2
  $PY "$here/real_bench.py" --out "$RUN/$sub" --label "$label" --configured-acceptance 3.3 --warmup ${WARMUP:-48} \
    --tokenizer "$tok" --baseline-url http://127.0.0.1:$BPORT --speculative-url http://127.0.0.1:$SPORT \
    --gateway-port $GWPORT --meta "vllm_version=${vllm_version:-emulator}" --meta "gpu=${gpu:-none}" "$@"
}
probe_greedy() {  # what random weights generate greedily (the emulator's dummy mode copies its repeat pattern)
  for n in 8 400 3000; do
    body=$($PY -c "import json,sys; n=int(sys.argv[1]); print(json.dumps({'model': 'target', 'prompt': ' '.join(f'w{i % 97} alpha' for i in range(n // 2)), 'max_tokens': 64, 'temperature': 0, 'ignore_eos': True, 'logprobs': 0}))" $n)
    curl -s -m 30 "$1/v1/completions" -H 'content-type: application/json' -d "$body" | cut -c1-6000; echo
  done
}
{ date -u; nvidia-smi 2>&1 || echo "no nvidia-smi"; } > "$RUN/nvidia-smi-$stage.txt"
echo "stage $stage, vLLM ${vllm_version:-none}, GPU ${gpu:-none}, budget ${BUDGET_S}s"

if [ "$stage" = singles ]; then
  for layout in ${LAYOUTS:-baseline dynk ngram}; do
    need=${NEED_S:-$([ $novllm = 1 ] && echo 100 || echo 170)}   # start-up (60-220 s) + phases (~100 s)
    if [ "$(left)" -lt "$need" ]; then echo "skip $layout: $(left) s left"; echo "$layout" >> "$RUN/skipped.txt"; continue; fi
    t0=$(date +%s)
    if [ $novllm = 1 ]; then
      case $layout in baseline) emulate h200-ngram; url=http://127.0.0.1:$BPORT;;
                      ngram) emulate h200-ngram; url=http://127.0.0.1:$SPORT;;
                      dynk) emulate h200-ngram-dynk; url=http://127.0.0.1:$SPORT;; esac
      label=emulated-h200-single-$layout
    else
      bash "$here/start_single.sh" "$layout"
      bash "$here/wait_vllm.sh" 8001 "single-$layout" $(( $(left) - 90 )) || { echo "$layout failed"; keylines "single-$layout" > "$RUN/$layout-startup.txt"; tail -60 "/tmp/logs/single-$layout.log" >> "$RUN/$layout-startup.txt"; pack; continue; }
      url=http://127.0.0.1:8001; label=real-$card-single-$layout
    fi
    up=$(( $(date +%s) - t0 )); echo "$layout up after ${up}s; $(left) s left"
    mkdir -p "$RUN/$layout"
    { echo "up_after_s=$up"; keylines "single-$layout"; cat /tmp/gpu/single-$layout.cmd 2>/dev/null; } > "$RUN/$layout/startup.txt"
    probe_greedy "$url" > "$RUN/$layout/dummy-greedy-probe.jsonl"
    bench "$label" "$layout" --single "$layout=$url" --budget-s $(( $(left) - 15 )) \
      --meta "layout=$layout alone, --gpu-memory-utilization 0.90" --meta "serve_cmd=$(cat /tmp/gpu/single-$layout.cmd 2>/dev/null)" \
      > "$RUN/$layout/bench.log" 2>&1
    tail -8 "$RUN/$layout/bench.log"; pack
  done
  if [ $novllm = 0 ]; then
    bash "$here/stop_vllm.sh" single-baseline single-ngram single-dynk
    [ "${PRESTART_PAIR:-0}" = 1 ] && bash "$here/serve_vllm.sh" baseline 8001 0.45
  fi
else
  if [ $novllm = 1 ]; then emulate h200-ngram; label=emulated-h200-pair
  else
    bash "$here/stop_vllm.sh" single-baseline single-ngram single-dynk
    [ "${FRESH_PAIR:-0}" = 1 ] && bash "$here/stop_vllm.sh" baseline speculative
    bash "$here/start_pair.sh" ngram
    bash "$here/wait_vllm.sh" 8001 baseline 300; bash "$here/wait_vllm.sh" 8002 speculative 300
    label=real-$card-pair
  fi
  echo "pair up after $(( $(date +%s) - start )) s; $(left) s left"
  mkdir -p "$RUN/pair"; { keylines baseline; echo ----; keylines speculative; } > "$RUN/pair/startup.txt"
  if [ "${WARM_SAMPLING:-0}" = 1 ]; then
    $PY "$repo/deploy/warm_vllm.py" http://127.0.0.1:$BPORT http://127.0.0.1:$SPORT > "$RUN/pair/warm_vllm.txt" 2>&1
    tail -2 "$RUN/pair/warm_vllm.txt"; echo "warmed up; $(left) s left"
  fi
  bench "$label" pair --policies "${POLICIES:-adaptive@1,adaptive@2,baseline,speculative}" --budget-s $(( $(left) - 25 )) \
    --meta "layout=pair 0.45 + 0.45" --meta "serve_cmd=$(cat /tmp/gpu/*.cmd 2>/dev/null | tr '\n' ' ')" "$@" \
    > "$RUN/pair/bench.log" 2>&1
  tail -20 "$RUN/pair/bench.log"
  # what vLLM compiled under traffic (a stall of seconds each), with its time: none after a good warm-up
  if [ $novllm = 0 ]; then
    grep -a "JIT compilation during inference" /tmp/logs/baseline.log /tmp/logs/speculative.log > "$RUN/pair/jit.txt"
    echo "$(wc -l < "$RUN/pair/jit.txt") JIT compilations during inference (pair/jit.txt)"
  fi
fi
{ date -u; nvidia-smi 2>&1; } >> "$RUN/nvidia-smi-$stage.txt"
[ -n "$emu_pid" ] && kill "$emu_pid"
pack
for d in "$RUN"/*/; do [ -f "$d/summary.md" ] && cp "$d/summary.md" "$OUT/summary-$(basename "$d").md"; done
echo "run_one_gpu.sh $stage done after $(( $(date +%s) - start )) s"; ls -la "$OUT"
