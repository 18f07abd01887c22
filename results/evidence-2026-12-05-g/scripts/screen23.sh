V=/tmp/l37f/snap-g1; E="SPECGATE_REGIME_EVIDENCE=true"
for w in wl/bursty-201 wl/bursty-202 wl/bursty-204 wl/bursty-206 wl/bursty-208 wl/bursty-209 wl/bursty-211; do ./cell.sh ev2 adaptive $V h200-ngram 1 /tmp/lead37/$w.jsonl 1 $E; done
./cell.sh ev2 adaptive $V h200-ngram-dynk 1 bursty 1 $E
for w in bursty mixed-phases structured-heavy /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl /tmp/lead37/wl/bursty-202.jsonl /tmp/lead37/wl/bursty-210.jsonl /tmp/lead37/wl2/bursty-108.jsonl; do ./cell.sh ev2 adaptive $V h200-ngram 1 $w 2 $E; done
echo SCREEN23DONE >> /tmp/l37f/ev/done.log
