V=/tmp/l37f/snap-g3
for n in 3 4 5; do ./cell.sh g3 adaptive $V h200-ngram 1 mixed-phases $n; done
./cell.sh g0 adaptive /tmp/l37f/snap-g0 h200-ngram 1 mixed-phases 4
echo SCREEN33DONE >> /tmp/l37f/ev/done.log
