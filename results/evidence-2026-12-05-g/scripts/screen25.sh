V=/tmp/l37f/snap-g2
for w in wl3/bursty-305 wl/bursty-203 wl/bursty-207 wl/bursty-210 wl3/bursty-303; do ./cell.sh g2 adaptive $V h200-ngram 1 /tmp/lead37/$w.jsonl 1; done
for w in structured-heavy bursty mixed-phases; do ./cell.sh g2 adaptive $V h200-ngram 1 $w 1; done
echo SCREEN25DONE >> /tmp/l37f/ev/done.log
