M=/tmp/l37f/snap-main; V=/tmp/l37f/snap-fin
while ! grep -q SCREEN13ADONE /tmp/l37f/ev/done.log; do sleep 5; done
for w in 209 210 211; do
  ./cell.sh B baseline $M h200-ngram 1 /tmp/lead37/wl/bursty-$w.jsonl 1
  ./cell.sh fin adaptive $V h200-ngram 1 /tmp/lead37/wl/bursty-$w.jsonl 1
done
echo SCREEN14ADONE >> /tmp/l37f/ev/done.log
