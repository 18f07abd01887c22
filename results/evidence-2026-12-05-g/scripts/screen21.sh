while pgrep -f "bursty-116.jsonl --profile" >/dev/null; do sleep 3; done
V=/tmp/l37f/snap-g1; E="SPECGATE_REGIME_EVIDENCE=true"
for w in bursty /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl structured-heavy mixed-phases /tmp/lead37/wl/bursty-210.jsonl /tmp/lead37/wl2/bursty-108.jsonl /tmp/lead37/wl2/bursty-116.jsonl; do ./cell.sh ev2 adaptive $V h200-ngram 1 $w 1 $E; done
echo SCREEN21DONE >> /tmp/l37f/ev/done.log
