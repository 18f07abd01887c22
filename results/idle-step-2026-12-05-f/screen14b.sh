M=/tmp/l37f/snap-main
while ! grep -q SCREEN13BDONE /tmp/l37f/ev/done.log; do sleep 5; done
for w in 209 210 211; do
  ./cell.sh S speculative $M h200-ngram 1 /tmp/lead37/wl/bursty-$w.jsonl 1
  ./cell.sh main adaptive $M h200-ngram 1 /tmp/lead37/wl/bursty-$w.jsonl 1
done
echo SCREEN14BDONE >> /tmp/l37f/ev/done.log
