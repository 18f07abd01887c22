#!/bin/bash
cd /tmp/l37f
S=/tmp/l37f/snap-v
bash cell.sh v1 adaptive $S h200-ngram 1 /tmp/l37f/pub/azure-conv-b.jsonl 1
bash cell.sh v1 adaptive $S h200-ngram 1 /tmp/lead37/wl2/structured-heavy.jsonl 1
bash cell.sh v1 adaptive $S h200-ngram 0.3 /work/main/gateway/workloads/builtin/demo-mixed.jsonl 1
bash cell4.sh v1 adaptive $S demo-mixed 100 1
bash cell.sh v1 adaptive $S h200-ngram 1 /tmp/lead37/wl5/bursty-510.jsonl 1
bash cell4.sh v1 adaptive $S mixed-medium 100 1
bash cell.sh v1 adaptive $S h200-ngram-dynk 1 /tmp/lead37/wl2/structured-heavy.jsonl 1
bash cell.sh v1 adaptive $S h200-ngram 1 /tmp/lead37/wl2/mixed-phases.jsonl 1
bash cell.sh v1 adaptive $S h200-ngram 1 /tmp/lead37/wl5/bursty-501.jsonl 1
