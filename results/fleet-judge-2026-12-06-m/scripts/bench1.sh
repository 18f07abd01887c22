#!/bin/bash
# usage: bench1.sh SNAP TAG WINDOW FLEET -- bench args...   (runs holding one bench slot; the last two runs
# with POLL=0.05, then as bench2.sh/slot2.sh, folded in here)
snap=$1; tag=$2; w=$3; fleet=$4; shift 4
cd /tmp/w38m
out=runs/$tag--$w--$fleet
/tmp/w38m/slot.sh bash -c "echo \"\$(date -u +%T) start $tag $w $fleet load \$(cut -d' ' -f1-3 /proc/loadavg)\" >> runs.log; \
  PYTHONPATH=/tmp/w38m/$snap timeout 1200 /work/main/.venv/bin/python -m gateway bench --workload win/$w.jsonl --time-scale 1 --fleet $fleet $* --out $out.json > $out.stdout 2>&1; \
  echo \"\$(date -u +%T) end $tag $w $fleet rc \$? load \$(cut -d' ' -f1-3 /proc/loadavg)\" >> runs.log"
