V=/tmp/l37f/snap-g4
./cell.sh g4 adaptive $V h200-ngram 1 /tmp/lead37/wl3/bursty-304.jsonl 1
./cell.sh g4 adaptive $V h200-ngram 1 /tmp/lead37/wl3/bursty-303.jsonl 1
./cell.sh g4 adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-203.jsonl 1
