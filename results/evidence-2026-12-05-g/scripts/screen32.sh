while ! grep -q SCREEN31DONE /tmp/l37f/ev/done.log; do sleep 5; done
V=/tmp/l37f/snap-g3; M=/tmp/l37f/snap-g0
for w in /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl structured-heavy; do ./cell.sh g3 adaptive $V h200-ngram-dynk 1 $w 1; done
./cell.sh g0 adaptive $M h200-ngram 4 /tmp/lead37/wl/bursty-203.jsonl 1
echo SCREEN32DONE >> /tmp/l37f/ev/done.log
