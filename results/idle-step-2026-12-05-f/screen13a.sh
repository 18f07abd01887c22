V=/tmp/l37f/snap-fin
for w in mixed-phases bursty /tmp/lead37/wl/bursty-202.jsonl /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-203.jsonl structured-heavy; do ./cell.sh fin adaptive $V h200-ngram 1 $w 2; done
echo SCREEN13ADONE >> /tmp/l37f/ev/done.log
