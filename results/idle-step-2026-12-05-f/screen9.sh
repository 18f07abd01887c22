V=/tmp/l37f/snap-v8
E="SPECGATE_SHADOW_LOOKUP=true SPECGATE_REGIME_LEAVE_MARGIN=0"
./cell.sh v8sh adaptive $V h200-ngram 1 mixed-phases 1 $E
./cell.sh v8sh adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-207.jsonl 1 $E
./cell.sh v8sh adaptive $V h200-ngram 1 bursty 1 $E
./cell.sh v8sh adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-202.jsonl 1 $E
./cell.sh v8sh adaptive $V h200-ngram 1 structured-heavy 1 $E
echo SCREEN9DONE >> /tmp/l37f/ev/done.log
