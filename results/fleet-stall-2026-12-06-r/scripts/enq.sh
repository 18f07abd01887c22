#!/bin/bash
# enq.sh PRIO SNAP TAG WINDOW SEED [POLICIES] [extra bench args...]: queue one 2+2 bench
prio=$1; snap=$2; tag=$3; w=$4; s=$5; pol=${6:-adaptive}; shift 6 2>/dev/null || shift $#
name=$prio-$tag--$w--s$s
cat > /tmp/w38r/queue/$name.sh <<EOT
cd /tmp/w38r && PYTHONPATH=/tmp/w38r/$snap timeout 1500 /work/wt/w38r/.venv/bin/python -m gateway bench --workload win/$w.jsonl --time-scale 1 --fleet 2xbaseline,2xspeculative --policies $pol --repeat 1 --seed $s $* --out runs/$tag--$w--s$s.json > runs/$tag--$w--s$s.stdout 2>&1
EOT
