#!/bin/bash
# poll.sh LOGDIR OUT : poll /admin/state of the gateway every 2 s while the bench runs
logdir=$1; out=$2; : > $out
for i in $(seq 1 60); do [ -f $logdir/gateway-adaptive.log ] && break; sleep 1; done
port=$(grep -o '"port":[0-9]*' $logdir/gateway-adaptive.log | head -1 | cut -d: -f2)
for i in $(seq 1 100); do
  curl -s -m 1 http://127.0.0.1:$port/admin/state >> $out && echo >> $out || break
  sleep 2
done
