V=/tmp/l37f/snap-v9
E="SPECGATE_MIGRATION=true"
./cell.sh v9m adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-203.jsonl 1 $E
./cell.sh v9m adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-207.jsonl 1 $E
./cell.sh v9m adaptive $V h200-ngram 1 mixed-phases 1 $E
echo SCREEN12DONE >> /tmp/l37f/ev/done.log
