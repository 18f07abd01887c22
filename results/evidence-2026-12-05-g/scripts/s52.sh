V=/tmp/l37f/snap-fin2
./cell.sh m03 adaptive $V h200-ngram 1 mixed-phases 2 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 /tmp/lead37/wl3/bursty-305.jsonl 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 structured-heavy 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
./cell.sh m03 adaptive $V h200-ngram 1 /tmp/lead37/wl2/bursty-116.jsonl 1 SPECGATE_REGIME_SWITCH_MARGIN=0.03
