V=/tmp/l37f/snap-v; M=/tmp/l37f/snap-main
while pgrep -f "cell.sh S speculative" > /dev/null; do sleep 5; done
for w in mixed-phases bursty; do
  ./cell.sh v1 adaptive $V h200-ngram 1 $w 1
  ./cell.sh v1sh adaptive $V h200-ngram 1 $w 1 SPECGATE_SHADOW_LOOKUP=true
done
for w in structured-heavy /tmp/lead37/wl/bursty-206.jsonl /tmp/lead37/wl/bursty-202.jsonl; do
  ./cell.sh v1 adaptive $V h200-ngram 1 $w 1
  ./cell.sh v1sh adaptive $V h200-ngram 1 $w 1 SPECGATE_SHADOW_LOOKUP=true
  ./cell.sh main adaptive $M h200-ngram 1 $w 1
  ./cell.sh B baseline $M h200-ngram 1 $w 1
  ./cell.sh S speculative $M h200-ngram 1 $w 1
done
echo SCREEN2DONE >> /tmp/l37f/ev/done.log
