#!/bin/bash
# b1.sh SNAP TAG WINDOW SEED [bench args...]: one adaptive bench on the 2 + 2 fleet holding a bench slot
snap=$1; tag=$2; w=$3; s=$4; shift 4
cd /tmp/w38p
out=runs/$tag--$w--s$s
/tmp/bslot.sh bash -c "echo \"\$(date -u +%T) start $tag $w s$s load \$(cut -d' ' -f1-3 /proc/loadavg)\" >> runs.log; \
  PYTHONPATH=/tmp/w38p/$snap timeout 1200 /work/main/.venv/bin/python -m gateway bench --workload /tmp/w38m/win/$w.jsonl --time-scale 1 --fleet 2xbaseline,2xspeculative --seed $s --policies adaptive $* --out $out.json > $out.stdout 2>&1; \
  echo \"\$(date -u +%T) end $tag $w s$s rc \$? load \$(cut -d' ' -f1-3 /proc/loadavg)\" >> runs.log"
