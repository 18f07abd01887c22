V=/tmp/l37f/snap-g3
for w in wl/bursty-203 wl3/bursty-305 wl/bursty-207 wl/bursty-210 wl3/bursty-303 wl2/bursty-108 wl2/bursty-116 wl3/bursty-301 wl3/bursty-304; do ./cell.sh g3 adaptive $V h200-ngram 1 /tmp/lead37/$w.jsonl 1; done
for w in structured-heavy bursty mixed-phases; do ./cell.sh g3 adaptive $V h200-ngram 1 $w 1; done
./cell.sh g3 adaptive $V h200-ngram-dynk 1 bursty 1
for w in wl/bursty-201 wl/bursty-202 wl/bursty-204 wl/bursty-206 wl/bursty-208 wl/bursty-209 wl/bursty-211 wl3/bursty-300 wl3/bursty-302 wl3/bursty-306 wl3/bursty-307; do ./cell.sh g3 adaptive $V h200-ngram 1 /tmp/lead37/$w.jsonl 1; done
echo SCREEN30DONE >> /tmp/l37f/ev/done.log
