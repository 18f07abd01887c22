#!/bin/bash
# gzip bench results (true_load dropped) and held-out access logs into the results folder
R=/work/wt/w38c/runs/g; D=/work/wt/w38c/results/fleet-2026-12-05-g/raw
mkdir -p $D/ab $D/peers $D/onegpu $D/logs
for sub in ab peers onegpu; do
  for f in $R/$sub/*.json; do
    python3 - "$f" "$D/$sub/$(basename $f).gz" <<'PY'
import json,gzip,sys
d=json.load(open(sys.argv[1]))
for x in d.get('policies',{}).values():
    if isinstance(x,dict): x.pop('true_load',None)
with gzip.open(sys.argv[2],'wt') as f: json.dump(d,f)
PY
  done
  cp $R/$sub/*.uptime $D/$sub/ 2>/dev/null
done
for f in $R/ab/*--s1[3-5]-logs/gateway-adaptive.log; do
  n=$(basename $(dirname $f)); gzip -c $f > $D/logs/$n.log.gz
done
du -sh $D
