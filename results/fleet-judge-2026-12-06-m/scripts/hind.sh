#!/bin/bash
# hind.sh WINDOW STATIC_FILES...: hindsight run on 2+2 with the map from the given static files
w=$1; shift
cd /tmp/w38m
M=$(PYTHONPATH=snap-main /work/main/.venv/bin/python hmap.py "$@")
echo "$w $M" >> maps.txt
./bench1.sh snap-main hind $w 2xbaseline,2xspeculative --seed 1 --policies hindsight --gateway-env SPECGATE_HINDSIGHT_MAP=$M
