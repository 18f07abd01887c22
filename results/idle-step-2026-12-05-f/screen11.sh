# fleets: the new defaults (v9) beside main, one seed each; then dynk mixed-phases
V=/tmp/l37f/snap-v9; M=/tmp/l37f/snap-main
cd /tmp/l37f
fl() { out=/tmp/l37f/ev/fleet-$1--$3--$4.json; [ -f $out ] || PYTHONPATH=$2 /work/main/.venv/bin/specgate bench --workload /work/wt/w38c/runs/$3.jsonl --time-scale 1 --fleet $5 --policies adaptive --seed 1 --out $out > $out.log 2>&1; echo "$(date +%T) fleet $1 $3 $4 load $(cut -d' ' -f1-3 /proc/loadavg)" >> /tmp/l37f/ev/done.log; }
fl v9 $V azure-conv-b 1+1 baseline,speculative
fl main $M azure-conv-b 1+1 baseline,speculative
fl v9 $V azure-code-b 1+1 baseline,speculative
fl main $M azure-code-b 1+1 baseline,speculative
echo SCREEN11DONE >> /tmp/l37f/ev/done.log
