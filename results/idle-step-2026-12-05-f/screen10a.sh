M=/tmp/l37f/snap-main
while ! grep -q SCREEN7DONE /tmp/l37f/ev/done.log; do sleep 5; done
for w in wl2/bursty-108 wl2/bursty-116 wl/bursty-201 wl/bursty-203 wl/bursty-204; do ./cell.sh main adaptive $M h200-ngram 1 /tmp/lead37/$w.jsonl 1; done
./cell.sh B baseline $M h200-ngram-dynk 1 bursty 1
./cell.sh S speculative $M h200-ngram-dynk 1 bursty 1
./cell.sh main adaptive $M h200-ngram-dynk 1 bursty 1
echo SCREEN10ADONE >> /tmp/l37f/ev/done.log
