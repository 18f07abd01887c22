#!/bin/bash
# rep.sh TAG SRC PORTBASE: round m's local repro of the real-H100 501 miss (run_one_gpu.sh pair --no-vllm, EMU_TS 1.32)
tag=$1; src=$2; p=$3
out=/tmp/l37f/rep/$tag; mkdir -p $out
[ -f $out/pair.tgz ] || (cd $src && OUT=$out RUN_DIR=/tmp/l37f/rep/run-$tag BPORT=$((p+1)) SPORT=$((p+2)) GWPORT=$p EMU_TS=1.32 WARMUP=8 \
  POLICIES=adaptive@1,baseline PYTHON=/work/main/.venv/bin/python TOKENIZER=/work/shared/gpu/models/target/tokenizer.json \
  BUDGET_S=900 bash deploy/gpu/run_one_gpu.sh pair --no-vllm --low-workload /tmp/l37f/w/bursty-501.jsonl --low-rate 0 \
  --low-duration 120 --high-n 0 > $out/log.txt 2>&1)
echo "$(date +%T) rep $tag load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/l37f/ev/done.log
