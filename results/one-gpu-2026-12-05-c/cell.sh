#!/bin/bash
# usage: cell.sh TAG(main|v1|stat|...) PROFILE SCALE MEMBER-FILE [SEED]
tag=$1; prof=$2; scale=$3; w=$4; seed=${5:-1}
name=$(basename $w .jsonl)
out=/tmp/w37c/runs/$tag--$prof--$name--x$scale--s$seed.json
[ -f $out ] && exit 0
if [ $tag = stat ]; then pol=baseline,speculative; src=/tmp/w37c/main; else pol=adaptive; src=/tmp/w37c/$tag; fi
PYTHONPATH=$src /work/wt/w37/.venv/bin/specgate bench $(cat /tmp/w37c/tagenv/$tag 2>/dev/null) --workload $w --profile $prof --policies $pol --time-scale $scale --seed $seed --out $out > $out.log 2>&1
echo "$(date +%T) $tag $prof $name x$scale s$seed rc=$? load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/w37c/q/done.log
