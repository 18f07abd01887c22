V=/tmp/l37f/snap-g4
./cell.sh g4 adaptive $V h200-ngram 0.3 demo-mixed 1
./cell.sh g4 adaptive $V h200-ngram 1 structured-heavy 1
./cell.sh g4 adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-210.jsonl 1
