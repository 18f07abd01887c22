V=/tmp/l37f/snap-g4
./cell.sh g4 adaptive $V h200-ngram 1 /tmp/lead37/wl2/bursty-108.jsonl 1
./cell.sh g4 adaptive $V h200-ngram 1 /tmp/lead37/wl3/bursty-301.jsonl 1
./cell.sh g4 adaptive $V h200-ngram 1 bursty 1
