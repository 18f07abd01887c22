while pgrep -f "h200-ngram-dynk --policies speculative" >/dev/null; do sleep 3; done
M=/tmp/l37f/snap-g0; V=/tmp/l37f/snap-g2
for w in /tmp/lead37/wl/bursty-207.jsonl structured-heavy; do
  ./cell.sh B baseline $M h200-ngram-dynk 1 $w 1
  ./cell.sh S speculative $M h200-ngram-dynk 1 $w 1
done
for w in bursty /tmp/lead37/wl/bursty-203.jsonl /tmp/lead37/wl/bursty-207.jsonl structured-heavy; do ./cell.sh g2 adaptive $V h200-ngram-dynk 1 $w 1; done
for w in wl/bursty-201 wl/bursty-202 wl/bursty-204 wl/bursty-206 wl/bursty-208 wl/bursty-209 wl/bursty-211 wl2/bursty-116 wl2/bursty-108; do ./cell.sh g2 adaptive $V h200-ngram 1 /tmp/lead37/$w.jsonl 1; done
echo SCREEN26DONE >> /tmp/l37f/ev/done.log
