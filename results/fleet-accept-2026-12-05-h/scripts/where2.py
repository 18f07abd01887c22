# ruff: noqa  -- an analysis script, kept as it ran
import sys, collections, os
sys.path.insert(0, "runs/h")
import replay
from gateway.core.protocol import request_view
from gateway.core.classify import features
SB, SS = replay.SB, replay.SS
for w in sys.argv[1:]:
    out = replay.run(w, 0.5)
    g = collections.defaultdict(lambda: [0, 0.0, 0, [], []]); tot = 0
    for r, p, o in out:
        raw = replay.rows[(w, r["id"])]; f = features(request_view(raw["endpoint"], raw["body"]), replay.cfg)
        cb, cs = (r["out"] - 1) * SB, (r["out"] - 1) / r["tps"] * SS
        tot += min(cb, cs)
        k = (r["cls"], f.copy_kind, r["kind"])
        x = g[k]; x[0] += 1; x[3].append(p); x[4].append(r["tps"])
        if (p > SS / SB) != (cs < cb): x[1] += abs(cb - cs); x[2] += 1
    print(w)
    for k, x in sorted(g.items(), key=lambda kv: -kv[1][1])[:7]:
        print("  ", k, "n", x[0], "regret share %.3f" % (x[1] / tot), "wrong", x[2], "pred mean %.2f" % (sum(x[3]) / len(x[3])), "true mean %.2f" % (sum(x[4]) / len(x[4])))
