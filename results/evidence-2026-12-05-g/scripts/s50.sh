V=/tmp/l37f/snap-fin2
./cell.sh m03 adaptive $V h200-ngram 0.3 demo-mixed 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 bursty 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-203.jsonl 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-210.jsonl 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
