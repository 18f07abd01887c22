V=/tmp/l37f/snap-g0; E="SPECGATE_REGIME_EVIDENCE=true"
for w in /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl structured-heavy /tmp/lead37/wl2/bursty-108.jsonl bursty /tmp/lead37/wl2/bursty-116.jsonl mixed-phases /tmp/lead37/wl/bursty-210.jsonl; do ./cell.sh ev1 adaptive $V h200-ngram 1 $w 1 $E; done
echo SCREEN20DONE >> /tmp/l37f/ev/done.log
