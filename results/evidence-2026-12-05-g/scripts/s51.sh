V=/tmp/l37f/snap-fin2
./cell.sh m03 adaptive $V h200-ngram 0.3 demo-mixed 2 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 mixed-phases 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-207.jsonl 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 /tmp/lead37/wl3/bursty-303.jsonl 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
