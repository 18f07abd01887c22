#!/bin/bash
# usage: cell.sh VERSION PROFILE SCALE WORKLOAD [SEED] [VARIANTS]: B, S, main adaptive (main's code), and adaptive of
# VERSION with shadow on (sh) and shadow + evidence (she), all at once
ver=$1; prof=$2; scale=$3; w=$4; seed=${5:-1}; variants=${6:-"B S main sh she"}
name=$(basename $w .jsonl); key=$prof--$name--x$scale--s$seed
V=/work/wt/w37c/.venv/bin/specgate
RUNS=${RUNS:-/tmp/w37s/runs}; mkdir -p $RUNS
run() { # tag policy src env...
  local tag=$1 pol=$2 src=$3; shift 3
  local out=$RUNS/$tag--$key.json
  local envs=(); for e in "$@"; do envs+=(--gateway-env "$e"); done
  [ -f $out ] || PYTHONPATH=$src $V bench --workload $w --profile $prof --policies $pol \
      --time-scale $scale --seed $seed --out $out "${envs[@]}" > $out.log 2>&1
}
for v in $variants; do
  case $v in
    B) run B baseline /tmp/w37s/main & ;;
    S) run S speculative /tmp/w37s/main & ;;
    main) run main adaptive /tmp/w37s/main & ;;
    mainev) run mainev adaptive /tmp/w37s/main SPECGATE_REGIME_EVIDENCE=true & ;;
    sh) run sh-$ver adaptive /tmp/w37s/$ver SPECGATE_SHADOW_LOOKUP=true & ;;
    sh1) run sh1-$ver adaptive /tmp/w37s/$ver SPECGATE_SHADOW_LOOKUP=true SPECGATE_SHADOW_PROMPT_LOOKUP_MIN=1 & ;;
    she1) run she1-$ver adaptive /tmp/w37s/$ver SPECGATE_SHADOW_LOOKUP=true SPECGATE_SHADOW_PROMPT_LOOKUP_MIN=1 SPECGATE_REGIME_EVIDENCE=true & ;;
    sh1m) run sh1m-$ver adaptive /tmp/w37s/$ver SPECGATE_SHADOW_LOOKUP=true SPECGATE_SHADOW_PROMPT_LOOKUP_MIN=1 SPECGATE_REGIME_SWITCH_MARGIN=0.02 & ;;
    she) run she-$ver adaptive /tmp/w37s/$ver SPECGATE_SHADOW_LOOKUP=true SPECGATE_REGIME_EVIDENCE=true & ;;
  esac
done
wait
echo "$(date +%T) $ver $key load $(cut -d' ' -f1-3 /proc/loadavg)" >> $RUNS/done.log
