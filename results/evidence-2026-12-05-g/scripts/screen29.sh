while ! grep -q SCREEN27DONE /tmp/l37f/ev/done.log; do sleep 5; done
M=/tmp/l37f/snap-g0
for w in /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl structured-heavy; do ./cell.sh g0 adaptive $M h200-ngram-dynk 1 $w 1; done
./cell.sh g0 adaptive $M h200-ngram 1 /tmp/lead37/wl3/bursty-305.jsonl 2
echo SCREEN29DONE >> /tmp/l37f/ev/done.log
