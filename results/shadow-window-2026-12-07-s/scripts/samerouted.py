# ruff: noqa  -- a quick analysis script, kept as it ran
"""samerouted.py TAG_A TAG_B MEMBER...: per family member, how many requests the two tags' adaptive runs sent to
different servers (the gateway's access log, by request id), each run's mean e2e and speculative share."""
import glob, json, sys
EV = "/tmp/l37f/ev"
def routes(tag, m):
    r = {}
    for l in open(glob.glob(f"{EV}/{tag}--h200-ngram--bursty-{m}--x1--s1-logs/gateway-*.log")[0]):
        if '"event":"request"' in l:
            e = json.loads(l); r[e["id"]] = e["backend"]
    d = json.load(open(f"{EV}/{tag}--h200-ngram--bursty-{m}--x1--s1.json"))["policies"]["adaptive"]["runs"][0]
    return r, d["mean_e2e_s"], d["speculative_share"]
ta, tb = sys.argv[1:3]
for m in sys.argv[3:]:
    a, ma, sa = routes(ta, m); b, mb, sb = routes(tb, m)
    print(f"| {m} | {len(a)} | {sum(a[k] != b.get(k) for k in a)} | {ma:.3f} ({sa:.2f}) | {mb:.3f} ({sb:.2f}) | {mb / ma:.3f} |")
