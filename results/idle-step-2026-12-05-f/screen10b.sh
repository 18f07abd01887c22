V=/tmp/l37f/snap-v8
E="SPECGATE_SHADOW_LOOKUP=true SPECGATE_REGIME_LEAVE_MARGIN=0"
while ! grep -q SCREEN9DONE /tmp/l37f/ev/done.log; do sleep 5; done
for w in wl/bursty-208 wl/bursty-206 wl2/bursty-108 wl2/bursty-116 wl/bursty-201 wl/bursty-203 wl/bursty-204; do ./cell.sh v8sh adaptive $V h200-ngram 1 /tmp/lead37/$w.jsonl 1 $E; done
./cell.sh v8sh adaptive $V h200-ngram-dynk 1 bursty 1 $E
echo SCREEN10BDONE >> /tmp/l37f/ev/done.log
