V=/tmp/l37f/snap-g3
for w in wl/bursty-201 wl/bursty-204 wl/bursty-209 wl3/bursty-301 wl3/bursty-304 wl2/bursty-116; do ./cell.sh g3 adaptive $V h200-ngram 1 /tmp/lead37/$w.jsonl 2; done
echo SCREEN34DONE >> /tmp/l37f/ev/done.log
