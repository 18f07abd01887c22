while ! grep -q SCREEN22DONE /tmp/l37f/ev/done.log; do sleep 5; done
M=/tmp/l37f/snap-g0; V=/tmp/l37f/snap-g2
for w in /tmp/lead37/wl/bursty-203.jsonl structured-heavy; do
  ./cell.sh B baseline $M h200-ngram 4 $w 1
  ./cell.sh S speculative $M h200-ngram 4 $w 1
  ./cell.sh g2 adaptive $V h200-ngram 4 $w 1
done
for w in bursty mixed-phases structured-heavy /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-210.jsonl /tmp/lead37/wl3/bursty-305.jsonl /tmp/lead37/wl2/bursty-108.jsonl; do ./cell.sh g2 adaptive $V h200-ngram 1 $w 3; done
echo SCREEN28DONE >> /tmp/l37f/ev/done.log
