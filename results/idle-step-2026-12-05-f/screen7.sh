V=/tmp/l37f/snap-v7; M=/tmp/l37f/snap-main
while pgrep -f "cell.sh" > /dev/null; do sleep 5; done
SH="SPECGATE_SHADOW_LOOKUP=true"
./cell.sh v7sh adaptive $V h200-ngram 1 bursty 1 $SH
./cell.sh v7sh adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-202.jsonl 1 $SH
./cell.sh v7 adaptive $V h200-ngram 1 bursty 1
./cell.sh v7sh adaptive $V h200-ngram 1 mixed-phases 1 $SH
for w in /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-208.jsonl; do
  ./cell.sh v7sh adaptive $V h200-ngram 1 $w 1 $SH
  ./cell.sh v7 adaptive $V h200-ngram 1 $w 1
  ./cell.sh main adaptive $M h200-ngram 1 $w 1
  ./cell.sh B baseline $M h200-ngram 1 $w 1
  ./cell.sh S speculative $M h200-ngram 1 $w 1
done
for w in structured-heavy /tmp/lead37/wl/bursty-206.jsonl /tmp/lead37/wl/bursty-204.jsonl /tmp/lead37/wl/bursty-203.jsonl; do
  ./cell.sh v7sh adaptive $V h200-ngram 1 $w 1 $SH
done
echo SCREEN7DONE >> /tmp/l37f/ev/done.log
