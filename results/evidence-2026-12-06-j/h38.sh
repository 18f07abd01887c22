#!/bin/bash
python3 rerun.py dh h38 /tmp/l37f/snap-h38 0 1 'demo-mixed--x0.3--s[12]|mixed-phases--x1--s[12]|bursty--x1--s1|structured-heavy--x1--s1|bursty-50[0-3]'
for w in azure-code-a azure-conv-a; do bash cell.sh h38 adaptive /tmp/l37f/snap-h38 h200-ngram 1 /tmp/l37f/pub/$w.jsonl 1; done
