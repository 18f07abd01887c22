V=/tmp/l37f/snap-v5; M=/tmp/l37f/snap-main
while pgrep -f "cell.sh" > /dev/null; do sleep 5; done
SH4="SPECGATE_SHADOW_LOOKUP=true SPECGATE_SHADOW_RATE_PER_S=4"
./cell.sh v5sh4 adaptive $V h200-ngram 1 bursty 1 $SH4
./cell.sh v5sh4 adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-202.jsonl 1 $SH4
./cell.sh v5sh4 adaptive $V h200-ngram 1 mixed-phases 1 $SH4
./cell.sh v5 adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-202.jsonl 1
for w in /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-208.jsonl; do
  ./cell.sh v5sh4 adaptive $V h200-ngram 1 $w 1 $SH4
  ./cell.sh v5 adaptive $V h200-ngram 1 $w 1
  ./cell.sh main adaptive $M h200-ngram 1 $w 1
  ./cell.sh B baseline $M h200-ngram 1 $w 1
  ./cell.sh S speculative $M h200-ngram 1 $w 1
done
for w in structured-heavy /tmp/lead37/wl/bursty-206.jsonl; do
  ./cell.sh v5sh4 adaptive $V h200-ngram 1 $w 1 $SH4
done
echo SCREEN6DONE >> /tmp/l37f/ev/done.log
