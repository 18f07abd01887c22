#!/bin/bash
# Issue 39 on the GPU machine: train the target and the draft, serve them with vLLM, measure acceptance per class.
#   bash deploy/gpu/train/run_train_and_measure.sh train     # call 1 (carry deploy/gpu/train/out/data): starts
#                                                            # both trainings in the background and returns
#   bash deploy/gpu/train/run_train_and_measure.sh measure   # after staging vLLM (../shared/gpu/stage.sh): waits for
#                                                            # the models, starts the servers, measures; repeat it
#                                                            # until it prints "ALL MEASURED" (it resumes)
#   bash deploy/gpu/train/run_train_and_measure.sh serve     # the pair's servers only (LABELS, default
#                                                            # "baseline ngram"), no acceptance measurement: waits
#                                                            # for the target, starts them, waits until healthy
#   bash deploy/gpu/train/run_train_and_measure.sh pack      # here (CPU, no GPU): corpus + tokenizer at full size, then
#                                                            # the files the GPU needs into out/gpu-data (carry that)
#   bash deploy/gpu/train/run_train_and_measure.sh cpu       # the whole chain at tiny size on CPU, emulator for vLLM
# Everything a call produces goes to $OUT (flat, <= 8 files): results.json, requests.jsonl, summary.md, train.json,
# logs.txt, nvidia-smi.txt. State between calls lives in /tmp/train (models, logs, results so far).
# env: DATA (deploy/gpu/train/out/gpu-data), TARGET_MIN (7), DRAFT_MIN (5; 0 = no draft), BUDGET_S (560),
#      MEM (0.25 per server), PAIR_NAME (pair: the folder and $OUT/NAME.tgz of a `pair` call),
#      LABELS ("baseline draft ngram"), CONC (8), PER_CLASS (0 = all), VLLM_ARGS (extra, e.g. --enforce-eager)
set -u
cmd=${1:-measure}
here=$(cd "$(dirname "$0")" && pwd); repo=$(cd "$here/../../.." && pwd); cd "$repo"
OUT=${OUT:-/tmp/train-out}; mkdir -p "$OUT"
DATA=${DATA:-$here/out/gpu-data}; T=/tmp/train; mkdir -p $T/models $T/results $T/logs $T/pids
BUDGET_S=${BUDGET_S:-560}; start=$(date +%s); left() { echo $(( BUDGET_S - ($(date +%s) - start) )); }
PY=${PYTHON:-python3}
PORTS_baseline=8001; PORTS_draft=8002; PORTS_ngram=8003
spec_for() {
  case $1 in
    baseline) echo "";;
    draft) echo "{\"method\": \"draft_model\", \"model\": \"$T/models/draft\", \"num_speculative_tokens\": 4}";;
    ngram) echo '{"method": "ngram", "num_speculative_tokens": 4, "prompt_lookup_max": 4, "prompt_lookup_min": 2}';;
  esac
}
alive() { local pid; pid=$(cat "$T/pids/$1" 2>/dev/null) && [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; }
collect() {  # what this call hands back
  { date -u; nvidia-smi 2>&1 || echo "no nvidia-smi"; } > "$OUT/nvidia-smi.txt"
  cp $T/results/results.json $T/results/requests.jsonl "$OUT/" 2>/dev/null
  $PY "$here/summarize.py" $T/results/results.json $T/models > "$OUT/summary.md" 2>&1
  $PY - "$T" > "$OUT/train.json" <<'EOF'
import json, sys, pathlib
t = pathlib.Path(sys.argv[1]); out = {}
for m in ("target", "draft"):
    p = t / "models" / m / "train_log.json"
    out[m] = json.loads(p.read_text()) if p.exists() else None
    c = t / "logs" / f"check-{m}.json"
    if c.exists(): out[m + "_check"] = c.read_text()
print(json.dumps(out, indent=1))
EOF
  { for f in $T/logs/*.log; do echo "==== $f (tail)"; tail -30 "$f"; done; } > "$OUT/logs.txt" 2>&1
  ls -la "$OUT"
}

train_bg() {  # name minutes
  [ -f "$T/models/$1/model.safetensors" ] && { echo "$1 already trained"; return; }
  alive "train-$1" && { echo "$1 training already running"; return; }
  setsid nohup $PY "$here/train_lm.py" --data "$DATA" --size "$1" --minutes "$2" --device cuda \
    --out "$T/models/$1" ${TRAIN_ARGS:-} > "$T/logs/train-$1.log" 2>&1 < /dev/null &
  echo $! > "$T/pids/train-$1"; echo "training $1 for $2 min (pid $!)"
}

serve() {  # label
  local label=$1 port; port=$(eval echo \$PORTS_$label)
  alive "$label" && { echo "$label already serving"; return 0; }
  local spec; spec=$(spec_for "$label")
  PYTHONPATH=/tmp/site VLLM_NO_USAGE_STATS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 DO_NOT_TRACK=1 \
  setsid nohup python3 -m vllm.entrypoints.cli.main serve $T/models/target --served-model-name target \
    --port "$port" --host 127.0.0.1 --gpu-memory-utilization "${MEM:-0.25}" --max-model-len 4096 --max-num-seqs 64 \
    ${spec:+--speculative-config "$spec"} ${VLLM_ARGS:-} > "$T/logs/vllm-$label.log" 2>&1 < /dev/null &
  echo $! > "$T/pids/$label"; echo "started $label on $port (pid $!): ${spec:-no speculation}"
}

wait_healthy() {  # label timeout
  local port; port=$(eval echo \$PORTS_$1)
  for _ in $(seq 1 "$2"); do
    curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && { echo "$1 healthy"; return 0; }
    alive "$1" || { echo "$1 died"; tail -30 "$T/logs/vllm-$1.log"; return 1; }
    sleep 1
  done; echo "$1 not healthy yet"; return 1
}

measured() { $PY -c "import json,sys; d=json.load(open('$T/results/results.json')); sys.exit(0 if '$1' in d['servers'] \
  and not d['servers']['$1']['skipped'] else 1)" 2>/dev/null; }

case $cmd in
  train)
    [ -f "$DATA/train.bin" ] || { echo "no $DATA/train.bin: build it here first (README)"; exit 2; }
    train_bg target "${TARGET_MIN:-7}"; [ "${DRAFT_MIN:-5}" = 0 ] || train_bg draft "${DRAFT_MIN:-5}"
    sleep 45; tail -n 3 $T/logs/train-*.log; collect;;
  measure)
    for m in target draft; do  # wait for both models
      while alive "train-$m" && [ "$(left)" -gt 120 ]; do sleep 5; done
      [ -f "$T/models/$m/model.safetensors" ] || { echo "$m not trained yet"; collect; exit 1; }
      [ -f "$T/logs/check-$m.json" ] || PYTHONPATH=/tmp/site $PY "$here/check_hf.py" "$T/models/$m" --prompts "$DATA/prompts.jsonl" \
        > "$T/logs/check-$m.json" 2>&1
    done
    [ -d /tmp/site/vllm ] || { echo "vLLM not staged in /tmp/site (../shared/gpu/stage.sh)"; collect; exit 1; }
    for label in ${LABELS:-baseline draft ngram}; do  # one server at a time starts (memory profiling)
      measured "$label" && continue
      serve "$label"; wait_healthy "$label" $(( $(left) - 60 )) || break
    done
    for label in ${LABELS:-baseline draft ngram}; do
      measured "$label" && { echo "$label measured before"; continue; }
      alive "$label" || continue
      b=$(( $(left) - 40 )); [ "$b" -lt 30 ] && break
      PYTHONPATH=/tmp/site $PY "$here/measure_acceptance.py" --prompts "$DATA/prompts.jsonl" --url "http://127.0.0.1:$(eval echo \$PORTS_$label)" \
        --label "$label" --out $T/results --conc "${CONC:-8}" --per-class "${PER_CLASS:-0}" --budget-s "$b" \
        --meta "gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" \
        --meta "vllm=$(PYTHONPATH=/tmp/site python3 -c 'import vllm; print(vllm.__version__)' 2>/dev/null)"
    done
    all=1; for label in ${LABELS:-baseline draft ngram}; do measured "$label" || all=0; done
    [ $all = 1 ] && echo "ALL MEASURED" || echo "not all measured: run measure again"
    collect;;
  serve)  # the pair only (no draft, no acceptance measurement): wait for the target, start the servers one by one
    while alive train-target && [ "$(left)" -gt 120 ]; do sleep 5; done
    [ -f "$T/models/target/model.safetensors" ] || { echo "target not trained yet"; collect; exit 1; }
    [ -d /tmp/site/vllm ] || { echo "vLLM not staged in /tmp/site (../shared/gpu/stage.sh)"; collect; exit 1; }
    for label in ${LABELS:-baseline ngram}; do
      serve "$label"; wait_healthy "$label" $(( $(left) - 30 )) || break
    done
    all=1; for label in ${LABELS:-baseline ngram}; do alive "$label" || all=0; done
    [ $all = 1 ] && echo "ALL SERVING" || echo "not all serving: run serve again"
    collect;;
  pair)  # issue 39 (5): the one-GPU pair of this model (baseline 8001 + n-gram 8003, from `measure`) behind
         # specgate: statics and adaptive at low load (mixed-low, Poisson 1.5/s) and c = 48 (mixed-high), as run_one_gpu.sh
    alive baseline && alive ngram || { echo "the pair is not serving: run measure first"; collect; exit 1; }
    if [ -d .gpu-wheels ] && [ ! -f /tmp/extra/.done ]; then
      python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/extra .gpu-wheels/*.whl && touch /tmp/extra/.done
    fi
    P=${PAIR_NAME:-pair}; mkdir -p "$T/$P"
    PYTHONPATH=/tmp/site:/tmp/extra:$repo PYTHONUNBUFFERED=1 $PY deploy/gpu/real_bench.py --out "$T/$P" \
      --label real-h200-trained-pair --baseline-url http://127.0.0.1:8001 --speculative-url http://127.0.0.1:8003 \
      --model target --tokenizer $T/models/target/tokenizer.json --max-model-len 4096 --warmup ${WARMUP:-24} \
      --policies "${POLICIES:-adaptive@1,adaptive@2,baseline,speculative}" --budget-s $(( $(left) - 30 )) \
      --meta "layout=pair of the trained 160M target, 0.25 + 0.25 of one GPU, n-gram gamma 4 (real acceptance)" \
      --meta "gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" > "$T/logs/$P-bench.log" 2>&1
    tail -25 "$T/logs/$P-bench.log"
    tar czf "$OUT/$P.tgz" -C $T "$P"; collect;;
  pack)  # on the CPU machine: .venv (gateway) builds the corpus, .venv-train (tokenizers) the tokenizer
    D=$here/out/data; PY=${PYTHON:-.venv/bin/python}; TPY=${TRAIN_PYTHON:-.venv-train/bin/python}
    $PY "$here/build_corpus.py" --out "$D" --max-mb "${MAX_MB:-30}" && \
    $TPY "$here/train_tokenizer.py" --data "$D" --vocab "${VOCAB:-12000}" --per-class "${PER_CLASS:-24}" || exit 1
    rm -rf "$here/out/gpu-data"; mkdir -p "$here/out/gpu-data"
    cp -r "$D"/train.bin "$D"/heldout.bin "$D"/prompts.jsonl "$D"/manifest.json "$D"/tokenizer "$here/out/gpu-data/"
    du -sh "$here/out/gpu-data"; exit 0;;
  cpu)  # the dry run: tiny corpus, tiny models for ~1 min each, the emulator in place of vLLM
    D=$here/out/tiny; PY=${PYTHON:-.venv/bin/python}; TPY=${TRAIN_PYTHON:-.venv-train/bin/python}
    rm -rf $T/results/* $T/models/* $T/logs/*
    $PY "$here/build_corpus.py" --out "$D" --max-mb "${MAX_MB:-3}" && \
    $TPY "$here/train_tokenizer.py" --data "$D" --vocab 2048 --per-class "${PER_CLASS:-8}" --max-prompt-tokens 1500 || exit 1
    for m in target draft; do
      $TPY "$here/train_lm.py" --data "$D" --size tiny --minutes "${CPU_MIN:-1}" --device cpu --threads 2 \
        --out "$T/models/$m" --seed $([ $m = target ] && echo 1 || echo 2) --log-every-s 10 > "$T/logs/train-$m.log" || exit 1
      $TPY "$here/check_hf.py" "$T/models/$m" --prompts "$D/prompts.jsonl" > "$T/logs/check-$m.json" 2>&1
    done
    $TPY "$here/offline_acceptance.py" --target "$T/models/target" --draft "$T/models/draft" --prompts "$D/prompts.jsonl" \
      --per-class 4 --max-tokens 48 > "$T/logs/offline-acceptance.log" 2>&1
    $PY -m gateway emulate --profile h200-draft --model target --time-scale 0.05 --baseline-port 18491 \
      --speculative-port 18492 > "$T/logs/emulator.log" 2>&1 & epid=$!; sleep 4
    $PY "$here/measure_acceptance.py" --prompts "$D/prompts.jsonl" --url http://127.0.0.1:18492 --label draft \
      --out $T/results --conc 4 --warmup 2 --meta "server=specgate emulate h200-draft (CPU dry run, no vLLM)"
    kill $epid
    $PY "$here/compare_emulator.py" --prompts "$D/prompts.jsonl" --real $T/results/results.json \
      --requests $T/results/requests.jsonl --labels draft --conc 4 > "$T/logs/compare.log" 2>&1
    collect;;
  *) echo "usage: $0 pack|train|measure|serve|pair|cpu"; exit 2;;
esac
