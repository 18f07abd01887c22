V=/tmp/l37f/snap-g3
for w in /tmp/lead37/wl3/bursty-305.jsonl /tmp/lead37/wl/bursty-203.jsonl structured-heavy /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-210.jsonl /tmp/lead37/wl3/bursty-303.jsonl bursty mixed-phases /tmp/lead37/wl2/bursty-108.jsonl; do ./cell.sh g3 adaptive $V h200-ngram 1 $w 2; done
echo SCREEN31DONE >> /tmp/l37f/ev/done.log
