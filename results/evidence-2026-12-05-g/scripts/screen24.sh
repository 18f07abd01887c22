while ! grep -q SCREEN23DONE /tmp/l37f/ev/done.log; do sleep 5; done
M=/tmp/l37f/snap-g0; V=/tmp/l37f/snap-g1; E="SPECGATE_REGIME_EVIDENCE=true"
for w in /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl structured-heavy; do
  ./cell.sh B baseline $M h200-ngram-dynk 1 $w 1
  ./cell.sh S speculative $M h200-ngram-dynk 1 $w 1
  ./cell.sh ev2 adaptive $V h200-ngram-dynk 1 $w 1 $E
done
for w in /tmp/lead37/wl/bursty-203.jsonl structured-heavy; do
  ./cell.sh B baseline $M h200-ngram 4 $w 1
  ./cell.sh S speculative $M h200-ngram 4 $w 1
  ./cell.sh ev2 adaptive $V h200-ngram 4 $w 1 $E
done
for w in bursty mixed-phases structured-heavy /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-202.jsonl /tmp/lead37/wl/bursty-210.jsonl /tmp/lead37/wl2/bursty-108.jsonl; do ./cell.sh ev2 adaptive $V h200-ngram 1 $w 3 $E; done
echo SCREEN24DONE >> /tmp/l37f/ev/done.log
