#!/bin/bash
lane=$1
python3 rerun.py dh f3 /tmp/l37f/snap-fin3 $lane 2 'demo-mixed--x0.3--s[12]|mixed-phases--x1--s[123]|bursty--x1--s1|structured-heavy--x1--s1|bursty-50[0-5]|bursty-51|mixed-medium--x4-first100--s1|demo-mixed--x4|creative-heavy|mixed-low'
