M=/tmp/l37f/snap-g0; V=/tmp/l37f/snap-g1; E="SPECGATE_REGIME_EVIDENCE=true"
for n in 300 301 302 303 304 305 306 307; do w=/tmp/lead37/wl3/bursty-$n.jsonl
  ./cell.sh B baseline $M h200-ngram 1 $w 1
  ./cell.sh S speculative $M h200-ngram 1 $w 1
  ./cell.sh ev2 adaptive $V h200-ngram 1 $w 1 $E
done
for n in 300 301 302 303 304 305 306 307; do ./cell.sh g0 adaptive $M h200-ngram 1 /tmp/lead37/wl3/bursty-$n.jsonl 1; done
echo SCREEN22DONE >> /tmp/l37f/ev/done.log
