while ! grep -q SCREEN25DONE /tmp/l37f/ev/done.log; do sleep 5; done
V=/tmp/l37f/snap-g2
for n in 300 301 302 304 306 307; do ./cell.sh g2 adaptive $V h200-ngram 1 /tmp/lead37/wl3/bursty-$n.jsonl 1; done
for w in bursty mixed-phases structured-heavy /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-210.jsonl /tmp/lead37/wl3/bursty-305.jsonl /tmp/lead37/wl3/bursty-303.jsonl /tmp/lead37/wl2/bursty-108.jsonl; do ./cell.sh g2 adaptive $V h200-ngram 1 $w 2; done
echo SCREEN27DONE >> /tmp/l37f/ev/done.log
